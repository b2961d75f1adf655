#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0\n-1\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
