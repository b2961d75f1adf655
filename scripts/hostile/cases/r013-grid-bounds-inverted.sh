#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: toy, splits: 1}\noutput: {dir: out, name: r, grid_points: 20, grid_lo: 3, grid_hi: -2, plot: false}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
