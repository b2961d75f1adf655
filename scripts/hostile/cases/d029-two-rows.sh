#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 2 > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
