#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
head -c 100000 /dev/urandom > k.ckpt; x eval --checkpoint k.ckpt
