#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print "a,k,y";next}{print $1",1,"$1*2}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}" --set model.kind=blr --set model.depth=0
grep -il 'nan\|infinity' out/r/*.json
