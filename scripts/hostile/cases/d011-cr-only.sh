#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | tr '\n' '\r' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"rows": *[0-9]*' out/r.json
