#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:friedman --rows 1 --out a.csv
cat a.csv
x data export toy --rows 1 --out b.csv
cat b.csv
