#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf '~: 1\ndata: {dataset: f.csv}\n' > c.yaml
x train --config c.yaml
