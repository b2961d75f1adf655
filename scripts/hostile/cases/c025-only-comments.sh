#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
printf '# nothing\n# here\n' > c.yaml
x train --config c.yaml
