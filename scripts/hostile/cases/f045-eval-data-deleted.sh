#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; rm f.csv; x eval --checkpoint out/r/split-00.ckpt
