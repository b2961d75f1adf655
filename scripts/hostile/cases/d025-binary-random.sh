#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
head -c 20000 /dev/urandom > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
