#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0\n100000000000000000000\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
printf '0\n1e15\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
