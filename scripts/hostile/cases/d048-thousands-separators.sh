#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print;next}{printf "\"%d,%03d\",%s,%s\n",NR,NR*7%1000,$2,$3}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep 'a' last.err | grep -v '^\[.*info' | tail -2; grep -o '"categories": *[0-9]*' out/r.json | head -2
