#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir d; printf 'base: ../d/./a.yaml\n' > d/a.yaml
x train --config d/a.yaml
