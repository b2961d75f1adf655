#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo victim > victim.txt; ln victim.txt e.csv
x data export synthetic:friedman --rows 10 --out e.csv; cat victim.txt
