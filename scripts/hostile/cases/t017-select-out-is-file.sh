#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.validation_fraction=0.2 --set output.name=f-whvi-a 2>/dev/null
echo keep > sel; x select out/f-whvi-a.json --out sel; cat sel
