#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x frobnicate
