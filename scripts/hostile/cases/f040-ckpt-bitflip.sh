#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; cp out/r/split-00.ckpt k.ckpt; sz=$(stat -c %s k.ckpt)
for off in 100 $((sz/2)) $((sz-100)); do cp out/r/split-00.ckpt k.ckpt; printf '\xff' | dd of=k.ckpt bs=1 seek=$off conv=notrunc 2>/dev/null; x predict --checkpoint k.ckpt --input f.csv --out p.csv; done
