#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | gzip > m.csv.gz; cfg m.csv.gz
x train --config c.yaml "${FAST[@]}"
