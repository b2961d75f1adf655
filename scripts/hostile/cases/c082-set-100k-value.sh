#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml --set "output.dir=$(head -c 100000 /dev/zero | tr '\0' a)"
