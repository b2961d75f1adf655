#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv --out a.csv 2>/dev/null
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv --out b.csv 2>/dev/null
cmp a.csv b.csv && echo identical
