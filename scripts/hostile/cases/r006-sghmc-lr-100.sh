#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set model.kind=sghmc --set model.sghmc.lr=100 --set model.sghmc.samples=5
