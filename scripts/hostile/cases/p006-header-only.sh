#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; head -1 f.csv > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv --out p.csv; ls p.csv 2>&1
