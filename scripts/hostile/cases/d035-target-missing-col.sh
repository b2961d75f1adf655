#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mini > m.csv; cfg m.csv "data: {target: price}"
cat > c.yaml <<Y
data: {dataset: m.csv, target: price}
Y
x train --config c.yaml "${FAST[@]}"
