#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: nothere.yaml\ndata: {dataset: f.csv}\n' > c.yaml
x train --config c.yaml
