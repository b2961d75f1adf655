#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
ccsv; cfg fc.csv "likelihood: {kind: softmax}"; x train --config c.yaml "${FAST[@]}" --set training.lr=10
