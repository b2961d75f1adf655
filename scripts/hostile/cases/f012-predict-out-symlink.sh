#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; echo victim > victim.txt; ln -s victim.txt p.csv
x predict --checkpoint out/r/split-00.ckpt --input f.csv --out p.csv; cat victim.txt
