#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {lr: 1e-320}"
x train --config c.yaml
