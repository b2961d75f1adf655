#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r.json --paper nothere.json
x table out/r.json
