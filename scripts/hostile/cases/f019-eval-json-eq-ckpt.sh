#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; md5sum out/r/split-00.ckpt > sum
x eval --checkpoint out/r/split-00.ckpt --json out/r/split-00.ckpt; md5sum -c sum
