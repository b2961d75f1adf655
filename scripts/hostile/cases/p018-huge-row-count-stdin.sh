#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 -c "
import sys
print('x1,x2,x3,x4,x5,x6,x7,x8,x9,x10')
for i in range(3000): print('0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,%d' % (i%2))" > in.csv
x predict --checkpoint out/r/split-00.ckpt --input - --mc-samples 2 < in.csv; echo "lines $(wc -l < last.out)"
