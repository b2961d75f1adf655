#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set 'output.dir=o$(touch PWNED)`touch PWNED2`;touch PWNED3'
ls; [ -e PWNED ] || [ -e PWNED2 ] || [ -e PWNED3 ] || [ -e /PWNED3 ] && echo "CHECK: shell executed"
