#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 -c "
import json,re; s=open('out/r.json').read(); s=re.sub(r'(\"rmse\": \{\s*\"mean\": )[0-9.e+-]+', r'\g<1>1e400', s, count=1); open('w.json','w').write(s)"
grep -c 1e400 w.json; x table w.json --paper ''; grep -ci 'inf\|nan' last.out
