#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\noutput: {dir: out, name: r}\ntraining: &t {steps: 20, steps_fixed_noise: 5, batch_size: 16}\nevaluation: *t\n' > c.yaml
x train --config c.yaml
