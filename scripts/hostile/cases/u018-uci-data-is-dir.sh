#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/data.txt; mkdir u/data.txt; x train --config c.yaml "${FAST[@]}"
