#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
head -c 20000 /dev/urandom | tr -d '\0' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
