#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --threads nan config --describe
