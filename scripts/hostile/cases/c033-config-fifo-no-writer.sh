#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkfifo p.yaml
s=$(date +%s); x train --config p.yaml; echo "took $(( $(date +%s)-s ))s"
