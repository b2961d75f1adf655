#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print "a,b,label";next}{print $1","$2",cat"}' > m.csv; cfg m.csv "likelihood: {kind: softmax}"
x train --config c.yaml "${FAST[@]}"
