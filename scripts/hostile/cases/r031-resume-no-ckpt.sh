#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx 2>/dev/null
rm out/r/split-00.ckpt
x train --config c.yaml "${FAST[@]}" --resume; grep -i 'again\|skipped' last.err | head -2; ls out/r
