#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ printf 'temp\xe9rature,b,y\n'; mini | tail -n +2; } > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}" --set data.target=nope
