#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.splits=2 2>/dev/null
cp out/r/split-01.ckpt out/r/split-00.ckpt
x train --config c.yaml "${FAST[@]}" --set data.splits=2 --resume; grep -i 'not the checkpoint\|again' last.err | head -2
