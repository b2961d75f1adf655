#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.kl_weight=1e6 --set training.lr=1
