#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | sed 's/$/\r/' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
