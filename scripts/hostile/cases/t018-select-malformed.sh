#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
echo '{' > a.json; x select a.json
echo '{"splits": [{"mnll": "x"}]}' > b.json; x select b.json
