#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:friedman --seed -1 --rows 5
x data export synthetic:friedman --seed 9223372036854775808 --rows 5
x data export synthetic:friedman --seed 9223372036854775807 --rows 5
