#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x eval --checkpoint x.ckpt --mc-samples inf
x eval --checkpoint x.ckpt --mc-samples nan
x eval --checkpoint x.ckpt --mc-samples 1e309
