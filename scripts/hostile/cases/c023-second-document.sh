#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\n---\ntraining: {steps: 5}\n' > c.yaml
x train --config c.yaml
