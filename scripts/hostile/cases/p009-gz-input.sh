#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; gzip -c f.csv > in.csv.gz; x predict --checkpoint out/r/split-00.ckpt --input in.csv.gz --out p.csv; wc -l p.csv
