#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for v in inf -inf Infinity 1e309 -1e309; do mini > m.csv; sed -i "12s/^[^,]*,/$v,/" m.csv; cfg m.csv; x train --config c.yaml "${FAST[@]}"; done
