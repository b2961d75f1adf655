#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print "a,b,label";next}{print $1","$2","(NR==5?"rare":(NR%2?"x":"z"))}' > m.csv; cfg m.csv "likelihood: {kind: softmax}"
x train --config c.yaml "${FAST[@]}"
