#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:friedman --rows 5 --out /dev/full
