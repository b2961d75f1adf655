#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.batched_splits=2 --set data.splits=2 --set training.stopping=off
