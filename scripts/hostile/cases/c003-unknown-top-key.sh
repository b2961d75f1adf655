#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "trainign: {steps: 5}"
x train --config c.yaml "${FAST[@]}"
