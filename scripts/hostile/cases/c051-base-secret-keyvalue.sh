#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'API_TOKEN: sk-live-abcdef123456\n' > secrets.yaml
printf 'base: secrets.yaml\n' > c.yaml
x train --config c.yaml
grep -q 'sk-live' last.err && echo "CHECK: echoed secret value"
