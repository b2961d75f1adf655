#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for s in 3 0 -64 2147483648 99999999999999999999 ',,,' 64,abc 1e3; do x bench fwht --sizes "$s" --repeats 1 --warmup 0; done
