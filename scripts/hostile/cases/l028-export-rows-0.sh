#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:hetero --rows 0 --out a.csv; wc -l a.csv
