#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x eval --checkpoint x.ckpt --mc-samples 0
