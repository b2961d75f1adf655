#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; python3 - <<'PY'
import zipfile
z=zipfile.ZipFile('out/r/split-00.ckpt'); print(z.namelist()[:12])
PY
