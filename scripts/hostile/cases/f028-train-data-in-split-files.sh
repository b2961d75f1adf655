#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; mkdir -p out/r; cp f.csv out/r/split-00-data.csv; md5sum out/r/split-00-data.csv > sum
printf 'data: {dataset: out/r/split-00-data.csv}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
ls out/r; md5sum -c sum || echo "CHECK: train removed/overwrote its own data file"
