#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\ntraining:\n  steps: 5\n  steps: 10\n' > c.yaml
x train --config c.yaml
