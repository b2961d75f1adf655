#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set data.validation_fraction=0.3 --set output.name=v1
x train --config c.yaml "${FAST[@]}" --set data.validation_fraction=0.3 --set output.name=v2 --set training.lr=0.01
x select out/v1.json out/v2.json
