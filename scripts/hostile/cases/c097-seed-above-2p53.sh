#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {seed: 9007199254740993}"
x train --config c.yaml
