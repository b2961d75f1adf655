#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo '[1,2,3]' > r.json; x table r.json --paper ''
