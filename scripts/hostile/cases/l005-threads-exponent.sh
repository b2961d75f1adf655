#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --threads 1e3 config --describe
