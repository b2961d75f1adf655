#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | tr ',' ';' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
