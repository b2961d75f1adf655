#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml --set $'training.lr=0.1\ndata: {dataset: /etc/passwd}'
