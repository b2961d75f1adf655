#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x bench fwht --device cuda --sizes 64 --repeats 1
