#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; { head -1 f.csv; sed -n 2p f.csv | sed 's/^[^,]*,/250000,/'; } > in.csv
x predict --checkpoint out/r/split-00.ckpt --input in.csv
