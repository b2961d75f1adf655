#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: a.yaml\n' > a.yaml
x train --config a.yaml
