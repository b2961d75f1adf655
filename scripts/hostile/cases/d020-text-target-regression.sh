#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '12s/,[^,]*$/,high/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
