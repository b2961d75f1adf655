#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > M.CSV; cfg M.CSV
x train --config c.yaml "${FAST[@]}"
