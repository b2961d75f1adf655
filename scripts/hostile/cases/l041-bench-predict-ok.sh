#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench predict --kinds mcd,whvi --widths 8 --rows 4 --batch 4 --repeats 1 --mc 2 --csv p.csv
cat p.csv
