#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir -p out/r; echo victim > victim.txt; ln -s ../../victim.txt out/r/split-00-grid.csv
printf 'data: {dataset: toy, splits: 1}\nmodel: {width: 16, activation: cos}\noutput: {dir: out, name: r, grid_points: 20, plot: false}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"; cat victim.txt
