#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; printf 'data: {dataset: m.csv, target: y, features: [a, y]}\noutput: {dir: out, name: r}\n' > c.yaml
x train --config c.yaml "${FAST[@]}"
