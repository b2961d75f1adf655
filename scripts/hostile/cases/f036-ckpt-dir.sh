#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir k.ckpt; x eval --checkpoint k.ckpt
