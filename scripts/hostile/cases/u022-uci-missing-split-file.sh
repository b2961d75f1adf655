#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/index_test_1.txt; x train --config c.yaml "${FAST[@]}"
