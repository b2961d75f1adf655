#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv "training: {lr: -0}"
x train --config c.yaml "${FAST[@]}"
grep -o '"lr": *[^,]*' out/r.json | head -1
