#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: [1, 2]\n' > c.yaml
x train --config c.yaml
