#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "print('{\"a\":'*50000 + '1' + '}'*50000)" > r.json; x table r.json --paper ''
