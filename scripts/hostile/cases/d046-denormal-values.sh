#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini | python3 -c "
import sys
for i,l in enumerate(sys.stdin):
    if i==0: print(l.strip()); continue
    a,b,y=l.strip().split(','); print('%.6e,%s,%s'%(float(a)*1e-310,b,y))" > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
grep -o '"rmse": [^,]*' out/r/split-00.json 2>/dev/null
