#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print;next}{printf "0x%x,%s,%s\n",NR,$2,$3}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"kind": *"[^"]*"' out/r.json | head -1
note "hex cells like 0x1f read as numbers (strtod)"
