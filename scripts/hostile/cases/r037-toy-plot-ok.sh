#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: toy, splits: 1}\nmodel: {activation: cos}\noutput: {dir: out, name: r, grid_points: 50}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"; ls out/r; file out/r/split-00.png 2>/dev/null | cut -c1-80
