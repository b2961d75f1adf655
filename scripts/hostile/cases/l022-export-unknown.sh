#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:nope
x data export synthetic:
x data export yacht
