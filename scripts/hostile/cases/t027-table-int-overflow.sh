#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 -c "
import json; d=json.load(open('out/r.json')); d['summary']['rmse']['n']=10**30; d['config']['model']['width']=10**25; json.dump(d,open('w.json','w'))"
x table w.json --paper ''; x table w.json --csv
