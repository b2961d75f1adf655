#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 3 > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -ci 'nan\|inf' out/r.json
