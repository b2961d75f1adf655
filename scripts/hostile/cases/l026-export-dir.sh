#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir d; x data export synthetic:friedman --rows 5 --out d
x data export synthetic:friedman --rows 5 --out d/
