#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; mkfifo in.csv; s=$(date +%s); x predict --checkpoint out/r/split-00.ckpt --input in.csv; echo "took $(( $(date +%s)-s ))s"
