#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {lr: .inf}"
x train --config c.yaml
cfg f.csv "training: {lr: inf}"
x train --config c.yaml
