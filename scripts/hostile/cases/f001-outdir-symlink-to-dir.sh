#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir elsewhere; ln -s elsewhere out
x train --config c.yaml "${FAST[@]}"; ls elsewhere
note "writes through a symlinked output.dir folder (only the final components are checked)"
