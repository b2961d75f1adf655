#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; head -5 f.csv | x predict --checkpoint out/r/split-00.ckpt --input /dev/stdin
