#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
cfg '"f.csv; touch PWNED #"'; x train --config c.yaml "${FAST[@]}"
[ -e PWNED ] && echo "CHECK: shell executed"
