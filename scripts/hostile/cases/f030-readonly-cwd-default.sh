#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; chmod 555 .; chmod 644 f.csv c.yaml
asnobody timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" > /tmp/whvi-hostile-ro.$$ 2>&1; echo "rc=$?"; grep -v info /tmp/whvi-hostile-ro.$$; rm -f /tmp/whvi-hostile-ro.$$; chmod 755 .
