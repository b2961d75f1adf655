#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0\n0\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
