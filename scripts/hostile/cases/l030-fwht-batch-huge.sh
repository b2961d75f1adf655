#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench fwht --sizes 1024 --batch 1099511627776 --repeats 1 --warmup 0
