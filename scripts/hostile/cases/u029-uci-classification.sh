#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; awk '{print $1, $2, ($3>1.5?1:0)}' u/data.txt > t && mv t u/data.txt
printf 'data: {dataset: u, protocol: standard}\noutput: {dir: out, name: r}\nlikelihood: {kind: softmax}\n' > c.yaml; x train --config c.yaml "${FAST[@]}"
