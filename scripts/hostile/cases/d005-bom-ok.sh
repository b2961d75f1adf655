#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ printf '\xef\xbb\xbf'; mini; } > m.csv; cfg m.csv "data: {target: y}"
cat > c.yaml <<Y
data: {dataset: m.csv, target: y}
output: {dir: out, name: r}
Y
x train --config c.yaml "${FAST[@]}"
