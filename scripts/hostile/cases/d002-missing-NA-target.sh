#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; sed -i '7s/,[^,]*$/,NA/' m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
