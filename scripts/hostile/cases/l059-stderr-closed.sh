#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; timeout 60 "$WHVI" train --config nope.yaml 2>&- ; echo "rc=$?"; ls
