#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trainedc --set model.kind=mcd; subset_check out/r/split-00.ckpt fc.csv --mc-samples 8
