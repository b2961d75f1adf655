#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | awk -F, 'NR==1{print;next}{print $1","$2",3.5"}' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
ls out 2>/dev/null; grep -i 'nan\|inf' out/r.json 2>/dev/null | head -3
