#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
A=(--set training.steps=1500 --set training.steps_fixed_noise=5 --set data.splits=3 --set evaluation.mc_samples=4 --set model.width=16 --set training.batch_size=16 --set training.stopping=off)
"$WHVI" --threads 1 train --config c.yaml "${A[@]}" > o 2> e & p=$!
while [ ! -e out/r/split-00.json ]; do sleep 0.05; done; sleep 0.2; kill -9 $p; wait $p 2>/dev/null
ls out/r; cp -r out snap
x --threads 1 train --config c.yaml "${A[@]}" --resume; grep -c 'skipped' last.err
mkdir ref; cd ref; cp ../c.yaml ../f.csv .; timeout 60 "$WHVI" --threads 1 train --config c.yaml "${A[@]}" 2>/dev/null; cd ..
for k in 00 01 02; do python3 - $k <<'PY'
import json,sys
k=sys.argv[1]; a=json.load(open('out/r/split-%s.json'%k)); b=json.load(open('ref/out/r/split-%s.json'%k))
print(k, 'same metrics' if all(a[m]==b[m] for m in ['rmse','mnll','crps']) else 'DIFFERENT %r %r'%(a['rmse'],b['rmse']))
PY
done
cmp snap/r/split-00.json out/r/split-00.json && echo "split 0 kept byte-identical"
ls -A out/r | grep -c tmp
