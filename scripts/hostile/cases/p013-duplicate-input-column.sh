#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; sed '1s/x2/x1/' f.csv > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv
