#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx 2>/dev/null
echo 'not json {' > out/r/split-00.json
x train --config c.yaml "${FAST[@]}" --resume
