#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: ""\n' > c.yaml
x train --config c.yaml
