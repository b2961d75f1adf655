#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config "$(printf 'a%.0s' $(seq 5000)).yaml"
