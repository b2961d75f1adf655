#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\noutput: {dir: out, name: r, checkpoints: off}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
