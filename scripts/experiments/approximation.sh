#!/usr/bin/env bash
# The WHVI paper's Fig. 11: the minimum RMSE of
# S1 H diag(g) H S2 fitted to a D x D matrix with i.i.d. U(-1, 1) entries, for
# D = 4 ... 1024 and 20 random matrices each, as JSON and a PNG (every fit as a
# point, the median per D as a line, the RMSE of predicting 0 as a reference):
#
#   scripts/experiments/approximation.sh [OUT_DIR] [whvi analysis approximation options...]
#
# Default OUT_DIR results/analysis/approximation. Runs in minutes on one core
# (configs/analysis/approximation.md gives the settings of the committed run).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-results/analysis/approximation}
shift || true
WHVI=${WHVI:-build/whvi}
[[ -x $WHVI ]] || { echo "experiments/approximation: $WHVI not built (scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$OUT"
"$WHVI" --threads 1 analysis approximation --json "$OUT/approximation.json" "$@"
# points and medians as CSV for gnuplot
python3 - "$OUT/approximation.json" "$OUT" <<'PY' 2>/dev/null || {
import json, sys, math
doc = json.load(open(sys.argv[1]))
with open(sys.argv[2] + "/points.csv", "w") as p, open(sys.argv[2] + "/medians.csv", "w") as m:
    for e in doc["dims"]:
        for r in e["rmse"]:
            p.write(f"{math.log2(e['d'])},{r}\n")
        m.write(f"{math.log2(e['d'])},{e['median']}\n")
PY
  echo "experiments/approximation: python3 missing, no figure" >&2; exit 0; }
command -v gnuplot >/dev/null || { echo "experiments/approximation: gnuplot missing, no figure" >&2; exit 0; }
zero=$(grep -o '"rmse_of_zero": [0-9.e-]*' "$OUT/approximation.json" | awk '{print $2}')
gnuplot <<GP
set terminal pngcairo size 640,440 enhanced font "sans,10"
set output '$OUT/approximation.png'
set datafile separator ','
set xlabel 'log_2 D'
set ylabel 'minimum RMSE'
set title 'S_1 H diag(g) H S_2 fitted to D x D matrices with U(-1,1) entries (Fig. 11)'
set key bottom right
set grid
plot '$OUT/points.csv' using 1:2 with points pt 7 ps 0.5 lc rgb '#7799cc' title 'one fit', \
     '$OUT/medians.csv' using 1:2 with linespoints lw 2 pt 5 lc rgb '#aa2222' title 'median', \
     $zero with lines dt 2 lc rgb 'black' title 'predicting 0'
GP
echo "experiments/approximation: wrote $OUT/approximation.json and $OUT/approximation.png"
