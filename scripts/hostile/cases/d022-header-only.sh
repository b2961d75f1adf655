#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo 'a,b,y' > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
