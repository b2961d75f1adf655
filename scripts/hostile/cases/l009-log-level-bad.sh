#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x --log-level LOUD config --describe
