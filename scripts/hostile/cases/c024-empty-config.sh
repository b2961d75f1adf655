#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
: > c.yaml
x train --config c.yaml
