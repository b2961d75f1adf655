#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; cp f.csv in.csv; ln in.csv alias.csv; md5sum in.csv > sum
x predict --checkpoint out/r/split-00.ckpt --input in.csv --out alias.csv; md5sum -c sum
