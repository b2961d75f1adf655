#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; printf 'data: {dataset: u, protocol: standard}\noutput: {dir: out, name: r}\nlikelihood: {kind: softmax}\n' > c.yaml; x train --config c.yaml "${FAST[@]}"
