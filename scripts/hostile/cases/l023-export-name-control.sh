#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export $'synthetic:\e[2J\nfake line'
