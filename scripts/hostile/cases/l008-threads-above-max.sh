#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --threads 9 config --describe
