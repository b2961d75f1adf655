#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data:\n\tdataset: f.csv\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
