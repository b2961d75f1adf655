#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; sed -i 's/ /,/g' u/data.txt; x train --config c.yaml "${FAST[@]}"
