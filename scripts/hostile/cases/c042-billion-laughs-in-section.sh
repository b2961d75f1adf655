#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 - <<'PY'
s = "data:\n  dataset: f.csv\n  features: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
s += "training: {steps: 1}\n"
open("c.yaml","w").write(s)
PY
fcsv
s=$(date +%s); x train --config c.yaml; echo "took $(( $(date +%s)-s ))s"
