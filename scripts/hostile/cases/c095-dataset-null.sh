#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: ~}\n' > c.yaml
x train --config c.yaml
