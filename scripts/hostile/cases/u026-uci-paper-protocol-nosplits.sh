#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; rm u/n_splits.txt u/index_t*; printf 'data: {dataset: u}\noutput: {dir: out, name: r}\n' > c.yaml; x train --config c.yaml "${FAST[@]}"
