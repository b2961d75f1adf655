#!/usr/bin/env bash
# Fig. 4 of the WHVI paper in one command: trains WHVI, NF-WHVI (10 planar
# flows), MFG, MCD (dropout 0.4, as the paper's figure), SGHMC and a deep
# ensemble (5 deterministic members at the ensemble's defaults) on the same toy
# data (configs/toy.yaml: 128 points, 2x128 cosine network, seed 0) and renders
# the six panels (predictive mean, 75% and 95% bands) side by side.
#
#   scripts/experiments/toy.sh [OUT_DIR]          (default results/toy/fig4)
#
# Each run writes OUT_DIR/toy-<model>.json (with the parameter count, the
# noise variance and the predictive std at the data, in the gap and outside)
# and its grid CSV; the figure is OUT_DIR/fig4.png. SGHMC runs 50,000 steps
# after which it keeps 200 samples (the paper ran it "for several thousand
# steps"); the variational models run the config's 10,500.
# Environment: WHVI (binary, default build/whvi), JOBS (parallel runs, default 2).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-results/toy/fig4}
WHVI=${WHVI:-build/whvi}
JOBS=${JOBS:-2}
[[ -x $WHVI ]] || { echo "experiments/toy: $WHVI not built (run scripts/setup.sh)" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "experiments/toy: gnuplot is not installed (scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$OUT"

models=(whvi nf-whvi mfg mcd sghmc ensemble)
declare -A sets=(
  [whvi]=""
  [nf-whvi]="--set model.nf_whvi.flows=10"
  [mfg]=""
  [mcd]="--set model.mcd.dropout=0.4"
  [sghmc]="--set training.steps=50000 --set model.sghmc.samples=200"
  [ensemble]=""
)
run() {
  local m=$1
  # shellcheck disable=SC2086
  "$WHVI" --threads 1 train --config configs/toy.yaml --set model.kind="$m" ${sets[$m]} \
    --set output.dir="$OUT" --set output.name="toy-$m" --set output.plot=false >"$OUT/toy-$m.log" 2>&1 ||
    { echo "experiments/toy: the $m run failed, see $OUT/toy-$m.log" >&2; return 1; }
  echo "experiments/toy: $m done"
}
pids=()
for m in "${models[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
  run "$m" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

titles=("WHVI" "NF-WHVI (10 planar flows)" "MFG" "MCD (p = 0.4)" "SGHMC" "Deep ensemble (5 members)")
if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  terminal='pngcairo size 2400,420 enhanced font "sans,11"'
else
  terminal='png size 2400,420'
fi
{
  echo "set terminal $terminal"
  echo "set output '$OUT/fig4.png'"
  echo "set datafile separator ','"
  echo "set multiplot layout 1,${#models[@]}"
  echo "set xrange [-2:3]; set yrange [-3:3]; set grid lc rgb '#e0e0e0'; unset key"
  echo "set style fill transparent solid 1.0 noborder"
  for i in "${!models[@]}"; do
    m=${models[$i]}
    g="$OUT/toy-$m/split-00-grid.csv"
    d="$OUT/toy-$m/split-00-data.csv"
    echo "set title '${titles[$i]}' noenhanced"
    echo "plot '$g' every ::1 using 1:4:5 with filledcurves lc rgb '#c6dbef', \
'$g' every ::1 using 1:6:7 with filledcurves lc rgb '#6baed6', \
'$g' every ::1 using 1:2 with lines lw 2 lc rgb '#08306b', \
'$d' every ::1 using 1:2 with points pt 7 ps 0.4 lc rgb '#000000'"
  done
  echo "unset multiplot"
} | gnuplot
echo "experiments/toy: wrote $OUT/fig4.png"
