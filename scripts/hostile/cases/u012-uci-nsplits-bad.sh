#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf 'two\n' > u/n_splits.txt; x train --config c.yaml "${FAST[@]}"
printf '0\n' > u/n_splits.txt; x train --config c.yaml "${FAST[@]}"
printf '1000000000\n' > u/n_splits.txt; x train --config c.yaml "${FAST[@]}"
