#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
( ulimit -f 4; timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" > o 2> e; echo "rc=$?" ); grep -v info e | tail -3
ls -la out out/r 2>/dev/null | grep -c '\.tmp\.' ; ls -A out/r 2>/dev/null
