#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
uci; python3 -c "
l=open('u/data.txt').read().split('\n'); l[4]='X'*200000+' 1 2'; open('u/data.txt','w').write('\n'.join(l))"
x train --config c.yaml "${FAST[@]}"
echo "stderr bytes: $(wc -c < last.err)"
