#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; cp f.csv in.csv; md5sum in.csv > sum
x predict --checkpoint out/r/split-00.ckpt --input in.csv --out in.csv; md5sum -c sum
x predict --checkpoint out/r/split-00.ckpt --input in.csv --out ./in.csv; md5sum -c sum
