#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo '{"a": 1}' > k.ckpt; x eval --checkpoint k.ckpt
