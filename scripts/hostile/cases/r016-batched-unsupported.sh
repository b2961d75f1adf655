#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.batched_splits=2 --set model.kind=nng --set data.splits=2
