#!/usr/bin/env bash
# Renders results/analysis/noise-collapse/: TABLE.md (validation RMSE, learned
# noise sd, MNLL and 95% coverage along training, mean over splits, from the
# records' learning curves) and noise-collapse.png (MNLL and noise variance
# against steps).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-results/analysis/noise-collapse}
files=()
for k in whvi mcd nf-whvi mfg; do [[ -f $DIR/boston-$k.json ]] && files+=("$DIR/boston-$k.json"); done
((${#files[@]})) || { echo "render/noise_collapse: no results in $DIR" >&2; exit 2; }
python3 scripts/render/noise_collapse.py "${files[@]}" >"$DIR/TABLE.md.tmp"
mv "$DIR/TABLE.md.tmp" "$DIR/TABLE.md"
bash scripts/render/curves.sh "$DIR/noise-collapse.png" \
  "boston, paper schedule: validation MNLL and learned noise variance (mean over splits)" mnll noise_var \
  "${files[@]}" >/dev/null
echo "render/noise_collapse: wrote $DIR/TABLE.md and $DIR/noise-collapse.png"
