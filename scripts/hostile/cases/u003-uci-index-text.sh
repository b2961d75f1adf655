#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0\nSECRET_abc123\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
grep -q SECRET last.err && echo "CHECK: file content echoed in error"
