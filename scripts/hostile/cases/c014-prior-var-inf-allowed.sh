#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "model: {whvi: {prior_var: .inf}}"
x train --config c.yaml "${FAST[@]}"
grep -o '"rmse": *[^,]*' out/r.json | head -2; grep -il 'nan\|infinity' out/r.json out/r/*.json && echo "CHECK: nan/inf in results"
