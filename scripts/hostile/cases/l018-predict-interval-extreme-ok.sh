#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
x predict --checkpoint out/r/split-00.ckpt --input f.csv --out p.csv --interval 0.9999999999999999
head -3 p.csv; grep -ci 'nan\|inf' p.csv
x predict --checkpoint out/r/split-00.ckpt --input f.csv --out p2.csv --interval 1e-300
head -3 p2.csv; grep -ci 'nan\|inf' p2.csv
