#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --threads -1 config --describe
