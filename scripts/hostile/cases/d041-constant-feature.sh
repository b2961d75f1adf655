#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print "a,k,y";next}{print $1",5,"$3}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -ci '"rmse": *null\|nan' out/r.json
