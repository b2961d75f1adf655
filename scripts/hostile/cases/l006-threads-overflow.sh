#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --threads 99999999999999999999 config --describe
