#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini 3000 | gzip > m.csv.gz; printf '\x00\x00\x00\x00\x00\x00\x00\x00' | dd of=m.csv.gz bs=1 seek=500 conv=notrunc 2>/dev/null; cfg m.csv.gz
x train --config c.yaml "${FAST[@]}"
