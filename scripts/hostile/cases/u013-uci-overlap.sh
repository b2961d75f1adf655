#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf '36\n' >> u/index_train_0.txt; x train --config c.yaml "${FAST[@]}"
