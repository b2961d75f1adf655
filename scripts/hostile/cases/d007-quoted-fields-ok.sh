#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ echo '"a, first","b ""q""",y'; mini | tail -n +2 | sed 's/^\([^,]*\),/"\1",/'; } > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"name": *"[^"]*"' out/r.json | head -3
