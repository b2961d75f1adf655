#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv, splits: "1"}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
