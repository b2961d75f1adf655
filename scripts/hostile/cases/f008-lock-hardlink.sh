#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out; echo victim > victim.txt; ln victim.txt out/r.lock
x train --config c.yaml "${FAST[@]}"; cat victim.txt
