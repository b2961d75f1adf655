#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
for k in mfg mcd nf-whvi vsd tt nng sghmc ensemble blr; do x train --config c.yaml "${FAST[@]}" --set model.kind=$k --set output.name=$k --set model.sghmc.samples=4 --set ensemble.members=2 --set model.nng.particles=2; done
grep -il '"rmse": *null\|nan' out/*.json
