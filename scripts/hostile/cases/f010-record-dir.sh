#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out/r.json
x train --config c.yaml "${FAST[@]}"
