#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
import zipfile
z=zipfile.ZipFile('m.csv','w'); z.writestr('xl/workbook.xml','<workbook/>'*100); z.close()"
cfg m.csv
x train --config c.yaml "${FAST[@]}"
