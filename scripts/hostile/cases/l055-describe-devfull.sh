#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
timeout 60 "$WHVI" config --describe > /dev/full 2>e; echo "rc=$?"; cat e
