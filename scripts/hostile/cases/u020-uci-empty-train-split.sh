#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; : > u/index_train_1.txt; x train --config c.yaml "${FAST[@]}" --set data.splits=2
