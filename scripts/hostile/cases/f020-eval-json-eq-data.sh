#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; md5sum f.csv > sum
x eval --checkpoint out/r/split-00.ckpt --json f.csv; md5sum -c sum || { echo "CHECK: eval --json overwrote the data file it read"; head -c 200 f.csv; }
