#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv, splits: &n 1}\noutput: {dir: out, name: r}\ntraining: {steps: 20, steps_fixed_noise: 5, batch_size: 16, mc_samples: *n}\nmodel: {width: 16}\nevaluation: {mc_samples: 4}\n' > c.yaml
x train --config c.yaml
