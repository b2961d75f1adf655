#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf '\n\n\n\n' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
