#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
ln -s loop1.yaml loop2.yaml; ln -s loop2.yaml loop1.yaml; printf 'base: loop1.yaml\n' > c.yaml
x train --config c.yaml
