#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
python3 -c "
import zipfile
z=zipfile.ZipFile('k.ckpt','w'); z.writestr('archive/data.pkl', b'\x80\x02}q\x00.'); z.writestr('archive/version','3'); z.close()"
x eval --checkpoint k.ckpt
x predict --checkpoint k.ckpt --input k.ckpt
