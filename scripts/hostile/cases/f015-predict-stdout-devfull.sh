#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv > /dev/full 2>e; echo "rc=$?"; grep -v info e
