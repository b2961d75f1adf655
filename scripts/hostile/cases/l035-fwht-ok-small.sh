#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench fwht --sizes 64,128 --repeats 2 --warmup 0 --max-seconds 0.5 --json b.json --csv b.csv
cat b.csv; grep -ci 'nan\|inf' b.csv
