#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
( ulimit -f 2; timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv --out p.csv > o 2> e; echo "rc=$?" ); grep -v info e | tail -2
ls -A | grep -c tmp; ls p.csv 2>&1
