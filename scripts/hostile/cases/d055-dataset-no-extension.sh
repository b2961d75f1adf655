#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > mydata; cfg mydata
x train --config c.yaml "${FAST[@]}"
