#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set likelihood.kind=student-t --set likelihood.student_t.init_df=2.01 --set training.lr=1
grep -il '\bnan\b\|infinity' out/r/*.json 2>/dev/null
