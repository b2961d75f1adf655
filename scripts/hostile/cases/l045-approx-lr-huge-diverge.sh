#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x analysis approximation --dims 8 --repeats 1 --steps 200 --lr 100 --json a.json
grep -i 'nan\|inf' a.json | head -3
