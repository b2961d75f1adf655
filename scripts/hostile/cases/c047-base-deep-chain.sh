#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for i in $(seq 0 40); do printf 'base: b%d.yaml\n' $((i+1)) > b$i.yaml; done; echo 'data: {dataset: f.csv}' > b41.yaml
x train --config b0.yaml
