#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml --set 'training.lr=[1,'
x train --config c.yaml --set 'output.dir={a: '
