#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0.0\n1.000000000000000000e+00\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
printf '0.5\n1\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
