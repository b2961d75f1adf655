#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 3000 | gzip > full.gz; head -c 2000 full.gz > m.csv.gz; cfg m.csv.gz
x train --config c.yaml "${FAST[@]}"
