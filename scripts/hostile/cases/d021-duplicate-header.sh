#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | sed '1s/.*/a,a,y/' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
