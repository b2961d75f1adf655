#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config /work/main/configs/uci/yacht-whvi.yaml --set data.protocol=standard --set data.splits=999 --set output.dir=out
