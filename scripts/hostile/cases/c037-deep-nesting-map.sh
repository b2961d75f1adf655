#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "print('data: ' + '{a: '*5000 + '1' + '}'*5000)" > c.yaml
x train --config c.yaml
