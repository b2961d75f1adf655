#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; s=$(date +%s); x train --config c.yaml --set output.grid_points=50; echo "took $(( $(date +%s)-s ))s"
