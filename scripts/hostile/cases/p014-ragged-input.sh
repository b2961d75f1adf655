#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; { head -5 f.csv; echo '1,2,3'; } > in.csv; x predict --checkpoint out/r/split-00.ckpt --input in.csv --out p.csv; ls p.csv 2>&1
