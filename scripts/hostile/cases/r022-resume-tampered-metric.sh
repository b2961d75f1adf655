#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.splits=2 2>/dev/null
python3 -c "
import json; r=json.load(open('out/r/split-00.json')); r['rmse']=0.0001; json.dump(r,open('out/r/split-00.json','w'),indent=2)"
x train --config c.yaml "${FAST[@]}" --set data.splits=2 --resume; grep -i 'edited\|again' last.err | head -2
grep -o '"rmse": [^,]*' out/r/split-00.json
