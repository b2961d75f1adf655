#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
WHVI_SIMD=sse9 x config --describe
WHVI_SIMD=sse9 x bench fwht --sizes 64 --repeats 1 --warmup 0 --max-dense-d 0
