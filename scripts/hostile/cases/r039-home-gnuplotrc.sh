#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'system "touch %s/PWNED_home"\n' "$PWD" > .gnuplot
printf 'data: {dataset: toy, splits: 1}\noutput: {dir: out, name: r, grid_points: 50}\n' > c.yaml
HOME=$PWD x train --config c.yaml "${FAST[@]}"
ls PWNED_* 2>/dev/null && echo "CHECK: \$HOME/.gnuplot (here the working directory) was executed by the plot helper"
