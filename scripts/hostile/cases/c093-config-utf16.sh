#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf 'data: {dataset: f.csv}\n' | iconv -t UTF-16 > c.yaml
x train --config c.yaml
