#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; : > u/data.txt; x train --config c.yaml "${FAST[@]}"
