#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; mkdir out; printf '{"data": {"dataset": "f.csv"}}\n' > out/r.json; cp out/r.json orig.json
printf 'base: out/r.json\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
cmp -s out/r.json orig.json && echo "base intact" || echo "CHECK: train wrote its record over its base config"
