#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; cp out/r.json paper.json; md5sum paper.json > sum
x table out/r.json --paper paper.json --out paper.json; md5sum -c sum
