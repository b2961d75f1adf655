#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
: > r.json; x table r.json --paper ''
