#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 - <<'PY'
s = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
for i in range(1, 30): s += "a%d: &a%d [%s]\n" % (i, i, ", ".join(["*a%d" % (i-1)]*10))
s += "data: {dataset: f.csv, features: *a29}\n"
open("c.yaml","w").write(s)
PY
s=$(date +%s); x train --config c.yaml; echo "took $(( $(date +%s)-s ))s"
