#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ echo 'a,b,y'; printf '%s,1,2\n' "$(head -c 20000000 /dev/zero | tr '\0' 7)"; mini | tail -n +2; } > m.csv; cfg m.csv
s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
