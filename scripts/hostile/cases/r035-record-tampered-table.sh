#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; sed -i 's/"complete": true/"complete": "yes"/' out/r.json
x table out/r.json --paper ''
