#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set model.kind=nng --set model.nng.lr=10 --set model.nng.particles=2
