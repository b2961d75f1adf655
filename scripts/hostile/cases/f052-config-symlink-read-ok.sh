#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; ln -s c.yaml l.yaml; x train --config l.yaml "${FAST[@]}"
