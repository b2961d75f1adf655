#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '12s/^[^,]*,/1e200,/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
