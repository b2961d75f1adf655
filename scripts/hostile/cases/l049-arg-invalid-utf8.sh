#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config $'\xff\xfe\xc3.yaml'
