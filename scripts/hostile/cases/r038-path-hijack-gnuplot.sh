#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
mkdir -p bin scripts/render; for p in gnuplot sh bash env python3; do printf '#!/bin/sh\ntouch %s/PWNED_%s\n' "$PWD" $p > bin/$p; chmod +x bin/$p; done
printf '#!/bin/sh\ntouch %s/PWNED_script\n' "$PWD" > scripts/render/toy.sh; chmod +x scripts/render/toy.sh
printf 'data: {dataset: toy, splits: 1}\noutput: {dir: out, name: r, grid_points: 50}\n' > c.yaml
PATH="$PWD/bin:$PWD:$PATH" x train --config c.yaml "${FAST[@]}"
ls PWNED_* 2>/dev/null && echo "CHECK: something from the working directory ran"; ls out/r
