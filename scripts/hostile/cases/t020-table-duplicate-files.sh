#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r.json out/r.json --paper ''
