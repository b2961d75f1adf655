#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {steps: 99999999999999999999999}"
x train --config c.yaml
