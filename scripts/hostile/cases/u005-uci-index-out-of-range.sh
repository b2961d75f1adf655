#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '0\n7\n' > u/index_features.txt; x train --config c.yaml "${FAST[@]}"
