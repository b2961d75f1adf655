#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: b.yaml\ndata: {dataset: f.csv}\n' > a.yaml; printf 'base: a.yaml\n' > b.yaml
x train --config a.yaml
