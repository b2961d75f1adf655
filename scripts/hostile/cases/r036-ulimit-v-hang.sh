#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
( ulimit -v 900000; timeout 25 "$WHVI" train --config c.yaml "${FAST[@]}" --set model.width=4096 > o 2> e; echo "rc=$? (124 = still running after 25 s)" ); grep -v info e | tail -3
note "gdb on such a process: main thread and OpenMP worker loop in OpenBLAS blas_memory_alloc -> malloc failing (100% CPU, never ends)"
