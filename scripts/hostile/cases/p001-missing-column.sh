#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; cut -d, -f1-5 f.csv > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv
