#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x config --dump nothere.yaml
