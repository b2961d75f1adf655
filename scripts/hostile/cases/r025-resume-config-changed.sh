#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx 2>/dev/null
x train --config c.yaml "${FAST[@]}" --set training.lr=0.002 --resume
