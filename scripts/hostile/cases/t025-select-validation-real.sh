#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv
for c in a b; do trainx --set data.validation_fraction=0.2 --set output.name=f-whvi-$c --set training.lr=0.00$([ $c = a ] && echo 1 || echo 2) 2>/dev/null; done
x select out/f-whvi-a.json out/f-whvi-b.json --out sel; ls sel
