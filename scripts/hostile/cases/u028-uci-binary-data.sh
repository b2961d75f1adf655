#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; head -c 3000 /dev/urandom > u/data.txt; x train --config c.yaml "${FAST[@]}"
echo "stderr bytes: $(wc -c < last.err)"
