#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; head -c 3000 out/r/split-00.ckpt > k.ckpt; x eval --checkpoint k.ckpt
mini > in.csv; x predict --checkpoint k.ckpt --input f.csv
