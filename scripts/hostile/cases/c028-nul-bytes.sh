#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: f.csv}\n\0\0\0secret\n' > c.yaml
x train --config c.yaml
grep -q secret last.err && echo "CHECK: echoed file content"
