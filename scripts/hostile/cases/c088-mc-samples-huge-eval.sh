#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
timeout 20 "$WHVI" train --config c.yaml "${FAST[@]}" --set evaluation.mc_samples=1000000 --set model.width=1024 > o 2> e; echo "rc=$? (20 s cap by the case)"
grep -c 'predicting:' e; grep 'predicting:' e | head -2
note "progress lines with an ETA appear: slow because asked for 1e6 samples, not a hang"
