#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; md5sum out/r.json > sum
x table out/r.json --paper '' --out out/r.json; md5sum -c sum
