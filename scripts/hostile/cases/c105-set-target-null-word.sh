#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'null,a,y\n' > n.csv; for i in $(seq 1 60); do echo "$((i%7)),$((i%3)),$((i*2))" >> n.csv; done
cfg n.csv; x train --config c.yaml "${FAST[@]}" --set data.target=null
grep -o '"target": *"[^"]*"' out/r.json | head -1
note "column named 'null' was asked as target; record target above"
