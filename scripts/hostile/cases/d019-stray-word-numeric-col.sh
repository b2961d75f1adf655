#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '12s/^[^,]*,/oops,/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -c 'warn' last.err; grep -o '"kind": *"[^"]*"' out/r.json | head -2
