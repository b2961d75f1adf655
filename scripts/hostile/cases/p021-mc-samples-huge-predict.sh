#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; head -3 f.csv > s.csv
timeout 30 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input s.csv --mc-samples 1000000 >o 2>e; echo "rc=$? (124: still silent after 30 s)"; grep -c . e; head -3 o
