#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x config --dump c.yaml --set training.lr=0x1p-3
grep -n 'lr:' last.out | head -2
