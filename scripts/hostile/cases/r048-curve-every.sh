#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set evaluation.every=1 --set evaluation.curve_mc_samples=1
grep -c '"curve"' out/r/split-00.json
