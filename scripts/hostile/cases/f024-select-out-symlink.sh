#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set data.validation_fraction=0.2
mkdir sel; echo victim > victim.txt; ln -s ../victim.txt sel/SUMMARY.md
x select out/r.json --out sel; cat victim.txt
