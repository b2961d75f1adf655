#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo '{"a": ' > r.json; x table r.json --paper ''
