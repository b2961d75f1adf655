#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx 2>/dev/null
python3 -c "print('['*100000 + ']'*100000)" > out/r/split-00.json
x train --config c.yaml "${FAST[@]}" --resume
