#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; mkdir -p cfgs/sub; printf 'data: {dataset: f.csv}\noutput: {dir: out}\n' > cfgs/base.yaml; printf 'base: ../base.yaml\noutput: {name: r}\n' > cfgs/sub/c.yaml
x train --config cfgs/sub/c.yaml "${FAST[@]}"
ls out
