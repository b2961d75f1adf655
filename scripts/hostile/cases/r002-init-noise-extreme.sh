#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set likelihood.init_log_noise_var=10
x train --config c.yaml "${FAST[@]}" --set likelihood.init_log_noise_var=-30
grep -il 'nan\|infinity' out/r/*.json out/r.json 2>/dev/null
