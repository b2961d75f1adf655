#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x eval --checkpoint /dev/zero
x predict --checkpoint /dev/urandom --input x.csv
