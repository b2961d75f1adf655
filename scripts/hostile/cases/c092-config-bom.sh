#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf '\xef\xbb\xbfdata: {dataset: f.csv}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
