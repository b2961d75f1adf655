#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
for v in 1 0 -0 nan inf 1e309 -1 abc 0.5x; do x predict --checkpoint out/r/split-00.ckpt --input f.csv --out p.csv --interval "$v"; done
