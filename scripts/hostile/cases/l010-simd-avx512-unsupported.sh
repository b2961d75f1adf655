#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --simd avx512 bench fwht --sizes 64 --repeats 1 --warmup 0 --max-dense-d 0
