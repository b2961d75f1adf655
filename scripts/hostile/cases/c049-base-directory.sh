#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir sub; printf 'base: sub\n' > c.yaml
x train --config c.yaml
