#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv.gz; cfg m.csv.gz
x train --config c.yaml "${FAST[@]}"
