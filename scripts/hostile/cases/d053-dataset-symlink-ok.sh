#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > real.csv; ln -s real.csv m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
