#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
"$WHVI" train --config c.yaml "${FAST[@]}" --set training.steps=30000 --set training.stopping=off > o1 2> e1 & p=$!
while [ ! -e out/r.lock ]; do sleep 0.1; done; sleep 0.3
x train --config c.yaml "${FAST[@]}"; kill $p; wait $p 2>/dev/null
