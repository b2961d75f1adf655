#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
ccsv; mkdir out; cp fc.csv out/r-reliability.csv; md5sum out/r-reliability.csv > sum
printf 'data: {dataset: out/r-reliability.csv}\nlikelihood: {kind: softmax}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
md5sum -c sum || echo "CHECK: train overwrote its own data file"
