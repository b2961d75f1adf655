#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '5s/^[^,]*,/,/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
x train --config c.yaml "${FAST[@]}" --set data.missing=drop
grep -o '"dropped_rows_missing": *[0-9]*' out/r.json
