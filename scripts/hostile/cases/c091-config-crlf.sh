#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\r\noutput: {dir: out, name: r}\r\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
