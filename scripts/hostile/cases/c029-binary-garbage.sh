#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
head -c 4096 /dev/urandom | tr -d '\0' > c.yaml
x train --config c.yaml
