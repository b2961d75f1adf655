#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r.json --csv --out t.csv; cat t.csv | head -3
