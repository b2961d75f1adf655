#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.splits=1 2>/dev/null
cp "$FIX/f2.csv" f.csv   # same columns, entirely different rows
x train --config c.yaml "${FAST[@]}" --set data.splits=2 --resume
grep -i 'skipped\|again' last.err | head -3
x eval --checkpoint out/r/split-00.ckpt
note "if split 0 was 'skipped' it was kept although the data file changed; eval then refuses it"
