#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; : > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv
