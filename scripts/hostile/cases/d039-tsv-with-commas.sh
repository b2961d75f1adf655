#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.tsv; cfg m.tsv
x train --config c.yaml "${FAST[@]}"
