#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; x train --config c.yaml "${FAST[@]}"
