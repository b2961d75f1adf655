#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'hello world\n' > c.yaml
x train --config c.yaml
