#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\noutput: {dir: out}\n' > 'my config.yaml'
x train --config 'my config.yaml' "${FAST[@]}"
