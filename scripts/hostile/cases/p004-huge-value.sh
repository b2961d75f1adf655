#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; { head -1 f.csv; sed -n 2p f.csv | sed 's/^[^,]*,/1e300,/'; } > in.csv
x predict --checkpoint out/r/split-00.ckpt --input in.csv
{ head -1 f.csv; sed -n 2p f.csv | sed 's/^[^,]*,/1e5,/'; } > in2.csv
x predict --checkpoint out/r/split-00.ckpt --input in2.csv
