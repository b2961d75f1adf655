#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir -p out other; ln -s ../other out/r
x train --config c.yaml "${FAST[@]}"; ls other
