#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
: > k.ckpt; x eval --checkpoint k.ckpt
