#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; sed '1s/,/ , /g' f.csv > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv --out p.csv; wc -l < p.csv
