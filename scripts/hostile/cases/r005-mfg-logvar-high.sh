#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x train --config c.yaml "${FAST[@]}" --set model.kind=mfg --set model.mfg.init_logvar=10 --set model.mfg.init_mean_scale=1e6
