#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
timeout 60 "$WHVI" --help > /dev/full 2>e; echo "rc=$?"; cat e
timeout 60 "$WHVI" train --help > /dev/full 2>e; echo "rc=$?"; cat e
