#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "print('data: {dataset: ' + 'a'*5000 + '.csv}')" > c.yaml
x train --config c.yaml
