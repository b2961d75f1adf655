#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '12s/^[^,]*,/NaN,/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
mini > m.csv; sed -i '12s/^[^,]*,/nan,/' m.csv
x train --config c.yaml "${FAST[@]}"
