#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ printf '"a\nfake: [error] injected",b,"a\nfake: [error] injected",y\n'; mini | tail -n +2 | sed 's/$/,1/'; } > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
echo "stderr lines: $(wc -l < last.err)"
