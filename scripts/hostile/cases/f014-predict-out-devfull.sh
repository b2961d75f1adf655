#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x predict --checkpoint out/r/split-00.ckpt --input f.csv --out /dev/full
