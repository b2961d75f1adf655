#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trainedc; x table out/r.json --paper ''
