#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
: > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
