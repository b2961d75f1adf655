#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x data export synthetic:friedman --classes 1 --rows 20
x data export synthetic:friedman --classes 101 --rows 20
