#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; printf 'data: {dataset: f.csv, features: ["x1,x2"]}\n' > c.yaml
x train --config c.yaml
