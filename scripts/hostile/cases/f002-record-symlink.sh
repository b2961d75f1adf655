#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir out; echo victim > victim.txt; ln -s ../victim.txt out/r.json
x train --config c.yaml "${FAST[@]}"; cat victim.txt; ls -l out
