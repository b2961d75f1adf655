#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {steps: 1e3}"
x train --config c.yaml
