#!/usr/bin/env bash
# An independent hostile corpus: 450 cases written without reading tests/corpus/
# (README.md beside this file). Runs the cases whose names match PATTERN, two at
# a time, each in a fresh temporary folder, and writes one result file per case
# into OUT_DIR: the commands, their trimmed output and exit status.
#   WHVI=$PWD/build/whvi bash scripts/hostile/run_cases.sh OUT_DIR ['PATTERN']   (default: every case)
. "$(dirname "$0")/../help.sh"
set -uo pipefail
(($# >= 1)) || { echo "usage: WHVI=build/whvi bash scripts/hostile/run_cases.sh OUT_DIR [PATTERN]" >&2; exit 2; }
HOSTILE=$(cd "$(dirname "$0")" && pwd)
export HOSTILE WHVI=$(cd "$(dirname "${WHVI:?set WHVI to the whvi binary}")" && pwd)/$(basename "$WHVI")
OUT=$(mkdir -p "$1" && cd "$1" && pwd); export OUT
cd "$HOSTILE/cases"
ls ${2:-[a-z]*}.sh 2>/dev/null | grep -v '^_lib.sh$' | xargs -P 2 -I{} bash -c '
  c={}; n=${c%.sh}; d=$(mktemp -d); cd "$d"
  nice -n 10 timeout 120 bash "$HOSTILE/cases/$c" > "$OUT/$n.txt" 2>&1
  printf "CASE_RC=%s\n" $? >> "$OUT/$n.txt"
  cd /; chmod -R u+rwx "$d" 2>/dev/null; rm -rf "$d"'
echo "hostile: $(ls "$OUT" | wc -l) case results in $OUT"
