#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out/r; echo junk > out/r/.split-00.json.tmp.AAAAAA
x train --config c.yaml "${FAST[@]}"; ls -A out/r
