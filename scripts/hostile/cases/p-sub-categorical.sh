#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 80 | awk -F, 'NR==1{print "a,cat,y";next}{c=(NR%3==0?"red":(NR%3==1?"green":"blue")); print $1","c","$3+(c=="red")}' > m.csv; cfg m.csv
trainx 2>train.err || tail -1 train.err
subset_check out/r/split-00.ckpt m.csv --mc-samples 8
