#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
{ echo "data: {dataset: f.csv}"; for i in $(seq 1 60000); do echo "# padding comment line number $i ......"; done; } > c.yaml
ls -la c.yaml | awk '{print "size",$5}'
x train --config c.yaml
