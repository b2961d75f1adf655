#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; x config --dump c.yaml --set output.name=x --set 'data.target=y'
cp last.out d.yaml; x config --dump d.yaml
