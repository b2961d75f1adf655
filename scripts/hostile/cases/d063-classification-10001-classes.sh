#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
print('a,label')
for i in range(20004): print('%.3f,c%d'%(i/20004,i//2))
" > m.csv; cfg m.csv "likelihood: {kind: softmax}"
s=$(date +%s); x train --config c.yaml "${FAST[@]}"; echo "took $(( $(date +%s)-s ))s"
