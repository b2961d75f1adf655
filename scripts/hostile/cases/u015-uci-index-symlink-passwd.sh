#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/index_target.txt; ln -s /etc/passwd u/index_target.txt; x train --config c.yaml "${FAST[@]}"
grep -q 'root' last.err && echo "CHECK: /etc/passwd content echoed"
