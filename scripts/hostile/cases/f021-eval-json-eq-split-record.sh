#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; md5sum out/r/split-00.json > sum
x eval --checkpoint out/r/split-00.ckpt --json out/r/split-00.json; md5sum -c sum
x train --config c.yaml "${FAST[@]}" --resume
grep -i 'edited\|again\|skipped' last.err | head -2
