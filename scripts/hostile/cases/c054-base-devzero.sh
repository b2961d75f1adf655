#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: /dev/zero\n' > c.yaml
x train --config c.yaml
