#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv, test_fraction: 0.999}\n' > c.yaml
x train --config c.yaml
