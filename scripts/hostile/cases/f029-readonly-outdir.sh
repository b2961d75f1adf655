#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; mkdir out; chmod 555 out; chmod 644 f.csv c.yaml
asnobody timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" > o 2> e; echo "rc=$?"; grep -v info e
