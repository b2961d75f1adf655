#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "print('data: ' + '['*20000 + ']'*20000)" > c.yaml
x train --config c.yaml
