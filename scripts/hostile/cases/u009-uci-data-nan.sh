#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; sed -i '5s/^[^ ]*/nan/' u/data.txt; x train --config c.yaml "${FAST[@]}"
