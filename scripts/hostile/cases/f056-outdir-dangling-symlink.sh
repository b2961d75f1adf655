#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; ln -s /nonexistent/place out
x train --config c.yaml "${FAST[@]}"; ls -l out
