#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:friedman --rows 10 --seed 9223372036854775807 --out a.csv
x data export synthetic:friedman --rows 10 --seed 9223372036854775807 --out b.csv
cmp a.csv b.csv && echo same
