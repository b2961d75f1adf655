#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; mkdir sub; cd sub; x eval --checkpoint ../out/r/split-00.ckpt
