#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "model: {kind: bayesian-magic}"
x train --config c.yaml
