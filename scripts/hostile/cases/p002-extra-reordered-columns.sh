#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
python3 -c "
import csv
r=list(csv.reader(open('f.csv'))); h=r[0]
idx=list(range(len(h)))[::-1]
w=csv.writer(open('re.csv','w')); w.writerow(['junk']+[h[i] for i in idx]); [w.writerow(['zz']+[row[i] for i in idx]) for row in r[1:]]"
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv --out a.csv 2>/dev/null
x predict --checkpoint out/r/split-00.ckpt --input re.csv --out b.csv
cmp -s a.csv b.csv && echo "same predictions with extra and reordered columns"
