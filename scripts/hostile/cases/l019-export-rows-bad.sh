#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
for v in -1 10000001 1e3 abc; do x data export synthetic:friedman --rows "$v"; done
