#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
timeout 60 "$WHVI" --threads 1 predict --checkpoint out/r/split-00.ckpt --input f.csv --out t1.csv 2>/dev/null
timeout 60 "$WHVI" --threads 2 predict --checkpoint out/r/split-00.ckpt --input f.csv --out t2.csv 2>/dev/null
cmp -s t1.csv t2.csv && echo "threads 1 and 2 identical" || { echo "threads 1 vs 2 differ:"; diff t1.csv t2.csv | head -4; }
