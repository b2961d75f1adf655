#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; : > u/index_test_0.txt; x train --config c.yaml "${FAST[@]}"
