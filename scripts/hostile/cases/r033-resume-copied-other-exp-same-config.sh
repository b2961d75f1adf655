#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cp f.csv g.csv; cp "$FIX/f2.csv" f.csv
cfg f.csv; trainx --set output.name=a 2>/dev/null
cp g.csv f.csv
mkdir -p out/r; cp out/a/split-00.json out/a/split-00.ckpt out/r/
x train --config c.yaml "${FAST[@]}" --resume; grep -i 'skipped\|again' last.err | head -2
note "split files of experiment a (trained on other data at the same path) copied into r"
