#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input - <&- >o 2>e; echo "rc=$?"; cat e
