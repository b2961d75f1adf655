#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 -c "
import json; d=json.load(open('out/r.json')); d['summary']['rmse']['std']=-5; d['summary']['rmse']['n']=-3; json.dump(d,open('w.json','w'))"
x table w.json --paper ''
