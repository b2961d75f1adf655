#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench fwht --sizes 64 --dtype float16 --repeats 1 --warmup 0
