#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
touch notadir; WHVI_DATA_DIR=$PWD/notadir x train --config /work/main/configs/uci/yacht-whvi.yaml --set output.dir=out
