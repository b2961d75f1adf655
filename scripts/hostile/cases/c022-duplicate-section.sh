#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\ntraining: {steps: 5}\ntraining: {lr: 0.01}\n' > c.yaml
x train --config c.yaml
