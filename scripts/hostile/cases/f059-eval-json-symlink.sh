#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; echo victim > victim.txt; ln -s victim.txt m.json
x eval --checkpoint out/r/split-00.ckpt --json m.json; cat victim.txt
