#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf '? [a, b]\n: 1\n' > c.yaml
x train --config c.yaml
