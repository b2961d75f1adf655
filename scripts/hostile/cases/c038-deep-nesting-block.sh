#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
s='data:\n'
for i in range(400): s += ' '*(i+2) + 'k%d:\n' % i
print(s)" > c.yaml
x train --config c.yaml
