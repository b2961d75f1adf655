#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set model.whvi.prior_var=1e-12
grep -il '\bnan\b\|infinity' out/r/*.json 2>/dev/null
