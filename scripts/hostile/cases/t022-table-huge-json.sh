#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
import json; print(json.dumps({'experiment':'x','pad':'a'*(1<<30)}))" > big.json 2>/dev/null || echo skip
ls -la big.json | awk '{print $5}'
s=$(date +%s); x table big.json --paper ''; echo "took $(( $(date +%s)-s ))s"
