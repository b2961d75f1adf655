#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set model.kind=blr --set model.depth=0 2>train.err || tail -1 train.err
subset_check out/r/split-00.ckpt f.csv --mc-samples 8
