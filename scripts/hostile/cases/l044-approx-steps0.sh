#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x analysis approximation --dims 4 --repeats 1 --steps 0 --json a.json
grep -ci 'nan\|inf' a.json; head -c 400 a.json
