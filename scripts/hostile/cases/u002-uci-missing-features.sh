#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/index_features.txt; x train --config c.yaml "${FAST[@]}"
