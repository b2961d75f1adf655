#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
( ulimit -v 600000; timeout 60 "$WHVI" config --describe > o 2> e; echo "rc=$?" ); tail -3 e
