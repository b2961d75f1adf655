#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 -c "
import json; d=json.load(open('out/r.json')); d['experiment']='é\u202e\u0000x|y'; d['dataset']='a|b\nc'; json.dump(d,open('w.json','w'))"
x table w.json --paper ''; grep -c . last.out
