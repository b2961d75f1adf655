#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; mkdir out; printf '{"data": {"dataset": "f.csv"}, "output": {"dir": "out", "name": "r"}}\n' > out/r.json; cp out/r.json orig.json
x train --config out/r.json "${FAST[@]}"
cmp -s out/r.json orig.json && echo "config intact" || echo "CHECK: train wrote its record over its own config file"
