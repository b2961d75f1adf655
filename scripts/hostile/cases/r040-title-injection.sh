#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: toy, splits: 1}\noutput: {dir: out, name: "a+b.c-d_e", grid_points: 50}\n' > c.yaml
x train --config c.yaml "${FAST[@]}" --set 'output.dir=o'"'"'; system("touch PWNED") #'
ls; ls PWNED 2>/dev/null && echo "CHECK: injection"
