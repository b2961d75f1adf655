#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out; mkfifo out/r.lock
s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
