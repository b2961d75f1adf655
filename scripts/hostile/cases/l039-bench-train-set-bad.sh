#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench train --kinds mcd --widths 8 --steps 1 --warmup 0 --rows 16 --batch 8 --set training.lr=nan
x bench train --kinds mcd --widths 8 --steps 1 --warmup 0 --rows 16 --batch 8 --set nokey
x bench train --kinds mcd --widths 8 --steps 5 --warmup 0 --rows 16 --batch 8 --set training.lr=10 --csv t.csv
cat t.csv 2>/dev/null
