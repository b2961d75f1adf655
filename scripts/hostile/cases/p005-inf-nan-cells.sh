#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
for v in inf -inf nan NaN '' 1e309 abc; do { head -1 f.csv; sed -n 2p f.csv | sed "s/^[^,]*,/$v,/"; } > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv; done
