#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
timeout 60 "$WHVI" config --describe >&- 2>e; echo "rc=$?"; cat e
