#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print;next}{print ","$2","$3}' > m.csv; cfg m.csv "data: {missing: drop}"
printf 'data: {dataset: m.csv, missing: drop}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
