#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.splits=3 2>/dev/null; ls out/r | wc -l
x train --config c.yaml "${FAST[@]}" --set data.splits=1; ls out/r
