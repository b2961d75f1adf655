#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo '{"experiment": "x"}' > r.json; x table r.json --paper ''
