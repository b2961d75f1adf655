#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config $'\e[31mred\e[0m.yaml'
grep -c $'\e' last.err
