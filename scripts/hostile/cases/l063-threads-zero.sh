#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x --threads 0 train --config c.yaml "${FAST[@]}"
