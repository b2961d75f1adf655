#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir c.yaml
x train --config c.yaml
