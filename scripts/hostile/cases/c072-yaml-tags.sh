#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv}\ntraining: {steps: !!python/object:os.system "echo hi"}\n' > c.yaml
x train --config c.yaml
