#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/data.txt; mkfifo u/data.txt; s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
