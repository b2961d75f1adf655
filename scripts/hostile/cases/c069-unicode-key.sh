#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: f.csv}\ntrainïng: {steps: 5}\n\xf0\x9f\x92\xa9: 1\n' > c.yaml
x train --config c.yaml
