#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out/r; echo victim > victim.txt; ln -s ../../victim.txt out/r/split-00-test-rows.txt
x train --config c.yaml "${FAST[@]}"; cat victim.txt
