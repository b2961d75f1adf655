#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
truncate -s 50G k.ckpt; s=$(date +%s); x eval --checkpoint k.ckpt; echo "took $(( $(date +%s)-s ))s"
