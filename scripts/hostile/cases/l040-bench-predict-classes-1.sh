#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench predict --kinds mcd --widths 8 --rows 4 --batch 4 --repeats 1 --classes 1
