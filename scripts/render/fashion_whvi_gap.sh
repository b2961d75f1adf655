#!/usr/bin/env bash
# Renders results/analysis/fashion-whvi-gap/: TABLE.md (validation and training
# error and MNLL of every run, scripts/render/fashion_whvi_gap.py) and
# curves.png / curves-train.png (validation and training error and MNLL along
# training).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-results/analysis/fashion-whvi-gap}
shopt -s nullglob
files=()
for f in "$DIR"/mcd.json "$DIR"/whvi.json "$DIR"/whvi-*.json; do [[ -f $f ]] && files+=("$f"); done
((${#files[@]})) || { echo "render/fashion_whvi_gap: no results in $DIR" >&2; exit 2; }
python3 scripts/render/fashion_whvi_gap.py "${files[@]}" >"$DIR/TABLE.md.tmp"
mv "$DIR/TABLE.md.tmp" "$DIR/TABLE.md"
bash scripts/render/curves.sh "$DIR/curves.png" "Fashion-MNIST FC 400x2: validation images" error mnll "${files[@]}" >/dev/null
bash scripts/render/curves.sh "$DIR/curves-train.png" "Fashion-MNIST FC 400x2: the first 6,000 training images" \
  train_error train_mnll "${files[@]}" >/dev/null
echo "render/fashion_whvi_gap: wrote $DIR/TABLE.md, curves.png and curves-train.png"
