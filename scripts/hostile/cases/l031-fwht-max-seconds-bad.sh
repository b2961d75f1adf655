#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for v in 0 inf nan -1 1e7; do x bench fwht --sizes 64 --max-seconds "$v"; done
