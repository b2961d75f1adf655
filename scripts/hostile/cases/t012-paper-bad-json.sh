#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; echo '{"x": [1,2' > paper.json; x table out/r.json --paper paper.json
echo '{"rows": "x"}' > paper.json; x table out/r.json --paper paper.json
