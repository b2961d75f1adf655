#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.stopping=validation --set training.stopping_fraction=0.5 --set training.stopping_every=1 --set training.stopping_patience=1
