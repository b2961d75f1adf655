#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; sed -i '5s/^[^ ]*/password=hunter2/' u/data.txt; x train --config c.yaml "${FAST[@]}"
grep -q hunter2 last.err && echo "CHECK: file content echoed in error"
