#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ printf '\xef\xbbX'; mini; } > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
