#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: [a.yaml, b.yaml]\n' > c.yaml
x train --config c.yaml
