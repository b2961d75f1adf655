#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench train --kinds mcd --widths 8 --splits 0 --steps 1 --warmup 0 --rows 16 --batch 8
x bench train --kinds nng --widths 8 --splits 2 --steps 1 --warmup 0 --rows 16 --batch 8
