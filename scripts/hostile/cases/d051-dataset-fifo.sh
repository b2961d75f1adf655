#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkfifo m.csv; cfg m.csv
s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
