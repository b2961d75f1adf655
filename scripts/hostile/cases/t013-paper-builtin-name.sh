#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r.json --paper whvi-neurips2020-table6
x table out/r.json --paper whvi-neurips2020-table99
