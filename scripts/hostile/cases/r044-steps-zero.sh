#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.steps=0 --set training.steps_fixed_noise=0
grep -o '"rmse": [^,]*' out/r/split-00.json
