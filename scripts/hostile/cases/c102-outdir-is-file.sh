#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; echo keep > out; x train --config c.yaml "${FAST[@]}"
cat out
