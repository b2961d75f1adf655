#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config /work/main/configs/uci/yacht-whvi.yaml --set data.splits=0 --set output.dir=out
