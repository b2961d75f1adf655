#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {steps: abc}"
x train --config c.yaml
