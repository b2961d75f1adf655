#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; { printf '\xef\xbb\xbf'; head -4 f.csv | sed 's/$/\r/'; } > in.csv
x predict --checkpoint out/r/split-00.ckpt --input in.csv
timeout 60 "$WHVI" predict --checkpoint out/r/split-00.ckpt --input f.csv 2>/dev/null | head -4 > ref.out
diff <(tr -d '\r' < last.out) ref.out > /dev/null && echo "same as plain input"
