#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; ln -s out/r/split-00.ckpt link.ckpt; x eval --checkpoint link.ckpt
