#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'defaults: &d {steps: 20}\ntraining:\n  <<: *d\n  lr: 0.01\ndata: {dataset: f.csv}\n' > c.yaml
x train --config c.yaml
