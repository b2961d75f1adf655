#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config nope.yaml
