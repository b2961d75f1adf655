#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; md5sum out/r/split-00.ckpt > sum
x predict --checkpoint out/r/split-00.ckpt --input f.csv --out out/r/split-00.ckpt; md5sum -c sum
