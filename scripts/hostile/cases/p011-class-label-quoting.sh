#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 90 | awk -F, 'NR==1{print "a,b,label";next}{l=(NR%3==0?"\"x,1\"":(NR%3==1?"\"q\"\"uote\"":"=cmd|calc")); print $1","$2","l}' > m.csv; cfg m.csv "likelihood: {kind: softmax}"
trainx 2>train.err || tail -1 train.err
x predict --checkpoint out/r/split-00.ckpt --input m.csv --out p.csv; head -2 p.csv
python3 -c "import csv; r=list(csv.reader(open('p.csv'))); print('cols', len(r[0]), set(len(x) for x in r))"
