#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; sed -i '5s/^[^ ]*/1e200/' u/data.txt; x train --config c.yaml "${FAST[@]}"
