#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for w in 0 65537 -8 abc '' 8,,16; do x bench train --kinds mcd --widths "$w" --steps 1 --warmup 0 --rows 16 --batch 8; done
