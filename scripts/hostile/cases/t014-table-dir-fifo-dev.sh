#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir d; mkfifo p.json; x table d --paper ''; x table p.json --paper ''; x table /dev/zero --paper ''
