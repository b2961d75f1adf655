#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'a #b,c,y\n' > h.csv; for i in $(seq 1 60); do echo "$((i%7)),$((i%3)),$((i*2))" >> h.csv; done
cfg h.csv; x train --config c.yaml "${FAST[@]}" --set 'data.target=a #b'
grep -o '"target": *"[^"]*"' out/r.json | head -1
