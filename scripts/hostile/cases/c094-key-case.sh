#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'Data: {dataset: f.csv}\n' > c.yaml
x train --config c.yaml
