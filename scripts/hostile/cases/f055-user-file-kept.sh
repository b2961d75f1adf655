#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; echo mine > out/r/split-notes.txt; echo mine > out/r/split-00.json.bak
x train --config c.yaml "${FAST[@]}"; ls out/r
