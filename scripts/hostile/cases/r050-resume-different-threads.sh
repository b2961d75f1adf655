#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; timeout 60 "$WHVI" --threads 1 train --config c.yaml "${FAST[@]}" 2>/dev/null
x --threads 2 train --config c.yaml "${FAST[@]}" --set data.splits=2 --resume; grep -i 'skipped\|again\|thread' last.err | head -3
