#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set output.checkpoints=false --set output.name=a 2>/dev/null
trainx --set output.checkpoints=false --set data.split_seed=5 --set output.name=b 2>/dev/null
mkdir -p out/r; cp out/b/split-00.json out/r/split-00.json
x train --config c.yaml "${FAST[@]}" --set output.checkpoints=false --resume; grep -i 'skipped\|again\|different' last.err | head -2
