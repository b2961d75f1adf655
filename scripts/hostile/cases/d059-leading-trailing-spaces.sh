#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | sed 's/,/ , /g' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"kind": *"[^"]*"' out/r.json | head -2
