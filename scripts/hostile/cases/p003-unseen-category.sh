#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 80 | awk -F, 'NR==1{print "a,cat,y";next}{c=(NR%3==0?"red":(NR%3==1?"green":"blue")); print $1","c","$3}' > m.csv; cfg m.csv
trainx 2>/dev/null
{ echo 'a,cat'; echo '0.5,purple'; echo '0.5,red'; echo '0.5,'; } > in.csv
x predict --checkpoint out/r/split-00.ckpt --input in.csv
