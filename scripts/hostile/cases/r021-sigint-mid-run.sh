#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
A=(--set training.steps=3000 --set training.steps_fixed_noise=5 --set data.splits=3 --set evaluation.mc_samples=4 --set model.width=16 --set training.batch_size=16 --set training.stopping=off)
timeout 60 "$WHVI" train --config c.yaml "${A[@]}" > o 2> e & p=$!
while [ ! -e out/r/split-00.json ]; do sleep 0.1; done; sleep 0.3; kill -INT $p; wait $p; echo "rc after SIGINT=$?"
grep -v info e | tail -2; ls -A out out/r
python3 -c "import json; d=json.load(open('out/r.json')); print('complete', d['complete'], 'splits', len(d['splits']))"
