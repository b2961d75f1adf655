#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r/split-00.json --paper ''
