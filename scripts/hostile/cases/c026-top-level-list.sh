#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf -- '- data\n- training\n' > c.yaml
x train --config c.yaml
