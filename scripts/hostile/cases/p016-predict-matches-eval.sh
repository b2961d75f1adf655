#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
python3 - <<'PY'
rows=[int(l) for l in open('out/r/split-00-test-rows.txt') if l.strip() and not l.startswith('#')]
L=open('f.csv').read().splitlines()
open('test.csv','w').write('\n'.join([L[0]]+[L[1+i] for i in rows])+'\n')
print('test rows', len(rows))
PY
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input test.csv --out p.csv 2>/dev/null
x eval --checkpoint out/r/split-00.ckpt
python3 - <<'PY'
import csv,json,math
p=list(csv.DictReader(open('p.csv'))); t=list(csv.DictReader(open('test.csv')))
rmse=math.sqrt(sum((float(a['mean'])-float(b['y']))**2 for a,b in zip(p,t))/len(p))
e=json.load(open('last.out'))
print('predict rmse %.10g  eval rmse %.10g' % (rmse, e['rmse']))
PY
