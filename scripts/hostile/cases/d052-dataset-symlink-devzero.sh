#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
ln -s /dev/zero m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
