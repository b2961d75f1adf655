#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set data.validation_fraction=0.2 --set output.name=f-whvi-a 2>/dev/null
python3 -c "
import json; d=json.load(open('out/f-whvi-a.json')); d['summary']=None; d['config']['data']=None; json.dump(d,open('w.json','w'))"
cp w.json f-whvi-z.json; x select f-whvi-z.json
