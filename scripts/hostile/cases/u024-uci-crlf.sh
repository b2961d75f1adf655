#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; for f in u/*.txt; do sed -i 's/$/\r/' $f; done; x train --config c.yaml "${FAST[@]}"
