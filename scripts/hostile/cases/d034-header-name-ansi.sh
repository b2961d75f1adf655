#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ printf 'a\e[2J\e[31m,b,y\n'; mini | tail -n +2; } > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}" --set data.target=zz
grep -c $'\e' last.err
