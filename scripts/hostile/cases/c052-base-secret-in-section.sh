#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'training:\n  lr: sk-live-abcdef123456\n' > secrets.yaml
printf 'base: secrets.yaml\n' > c.yaml
x train --config c.yaml
grep -q 'sk-live' last.err && echo "CHECK: echoed a value from the base file"
