#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for v in 0 nan inf -1 101 1e-320; do x analysis approximation --dims 4 --repeats 1 --steps 1 --lr "$v"; done
