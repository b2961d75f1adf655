#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config /work/main/configs/uci/yacht-whvi.yaml --set 'data.dataset=../../../../etc' --set output.dir=out "${FAST[@]}"
