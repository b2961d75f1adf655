#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --version train --config nope.yaml
