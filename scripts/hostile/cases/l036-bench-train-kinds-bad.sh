#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench train --kinds foo --widths 8 --steps 1 --warmup 0
x bench train --kinds whvi:model.width=abc --widths 8 --steps 1 --warmup 0
x bench train --kinds 'whvi:training.lr=1e309' --widths 8 --steps 1 --warmup 0
x bench train --kinds , --widths 8 --steps 1
