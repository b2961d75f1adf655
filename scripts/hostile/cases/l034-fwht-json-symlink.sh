#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo victim > victim.txt; ln -s victim.txt j.json
x bench fwht --sizes 64 --repeats 1 --warmup 0 --max-dense-d 0 --json j.json
cat victim.txt
