#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print "a,b,label";next}{l=NR%3; s=(l==0?"1":(l==1?"1.0":"2")); print $1","$2","s}' > m.csv; cfg m.csv "likelihood: {kind: softmax}"
x train --config c.yaml "${FAST[@]}"
grep -A3 '"classes"' out/r.json | head -4
