#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for v in 'N/A' 'null' 'None' '-' '?'; do mini > m.csv; sed -i "12s|^[^,]*,|$v,|" m.csv; cfg m.csv; x train --config c.yaml "${FAST[@]}"; grep -o '"kind": *"[^"]*"' out/r.json | head -1; done
