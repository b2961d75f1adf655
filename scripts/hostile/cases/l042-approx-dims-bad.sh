#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for d in 3 16384 1 0 abc 4,,8; do x analysis approximation --dims "$d" --repeats 1 --steps 1; done
