#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {base: x.yaml}\n' > c.yaml
x train --config c.yaml
