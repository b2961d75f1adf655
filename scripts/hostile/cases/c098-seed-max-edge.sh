#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {seed: 9000000000000000}"
x train --config c.yaml "${FAST[@]}"
