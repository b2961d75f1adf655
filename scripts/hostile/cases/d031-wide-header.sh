#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
import random
random.seed(1)
n=5000
print(','.join('c%d'%i for i in range(n))+',y')
for r in range(30): print(','.join('%.3f'%random.random() for i in range(n))+',%.3f'%random.random())
" > m.csv; cfg m.csv
s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
