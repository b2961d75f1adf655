#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print;next}{printf "\" %s \",%s,%s\n",$1,$2,$3}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"kind": *"[^"]*"' out/r.json | head -1; grep -o '"categories": *[0-9]*' out/r.json | head -1
