#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx 2>/dev/null
echo '[1,2,3]' > out/r/split-00.json
x train --config c.yaml "${FAST[@]}" --resume
