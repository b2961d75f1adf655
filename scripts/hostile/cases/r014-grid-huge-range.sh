#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: toy, splits: 1}\noutput: {dir: out, name: r, grid_points: 20, grid_lo: -1e15, grid_hi: 1e15, plot: false}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
grep -ci 'nan\|inf' out/r/split-00-grid.csv 2>/dev/null; head -3 out/r/split-00-grid.csv 2>/dev/null
