#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'base: /etc/passwd\n' > c.yaml
x train --config c.yaml
grep -q 'root:' last.err && echo "CHECK: echoed /etc/passwd content"
