#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
print('id,b,y')
for i in range(10050): print('u%d,%.3f,%.3f'%(i,i%7/7,i%5))
" > m.csv; cfg m.csv
x train --config c.yaml "${FAST[@]}"
