#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x eval --checkpoint out/r/split-00.ckpt --mc-samples -0
