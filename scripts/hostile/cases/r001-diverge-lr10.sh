#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set training.lr=10
python3 -c "import json; d=json.load(open('out/r.json')); print('complete', d.get('complete'), 'failed_split' in d)"
ls out/r
