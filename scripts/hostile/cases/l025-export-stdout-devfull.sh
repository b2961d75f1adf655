#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
timeout 60 "$WHVI" data export synthetic:friedman --rows 50 > /dev/full 2> e; echo "rc=$?"; cat e
