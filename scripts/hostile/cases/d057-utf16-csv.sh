#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | iconv -t UTF-16 > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
