#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\noutput: {dir: out, name: r}\n' > c.yaml
xin c.yaml train --config - "${FAST[@]}"
