#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set data.protocol=kfold --set data.folds=3
python3 -c "import json; d=json.load(open('out/r.json')); print(len(d['splits']), d['complete'])"
