#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '9s/$/,7,8/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
