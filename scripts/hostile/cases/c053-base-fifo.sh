#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkfifo b.yaml; printf 'base: b.yaml\n' > c.yaml
s=$(date +%s); x train --config c.yaml; echo "took $(( $(date +%s)-s ))s"
