#!/usr/bin/env bash
# Steps/s against width, one line per kind, from the CSV of `whvi bench train --csv`.
#   scripts/render/bench_train.sh BENCH.csv OUT.png [TITLE]
. "$(dirname "$0")/../help.sh"
set -euo pipefail
die() { echo "render/bench_train: $*" >&2; exit 2; }
(($# == 2 || $# == 3)) || die "usage: scripts/render/bench_train.sh BENCH.csv OUT.png [TITLE]"
CSV=$1 OUT=$2 TITLE=${3:-whvi bench train}
[[ -f $CSV ]] || die "'$CSV' not found"
header=$(head -n 1 "$CSV")
# steps/s column: 4 in the older CSVs (no splits column), 5 with splits (rows with splits > 1 are left out)
case $header in
  kind,width,params,steps_per_second*) col=4 split_col=0 ;;
  kind,width,splits,params,steps_per_second*) col=5 split_col=3 ;;
  *) die "'$CSV' is not a CSV of whvi bench train --csv" ;;
esac
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
kinds=$(tail -n +2 "$CSV" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
term=png
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo && term=pngcairo
gnuplot <<GP
set terminal $term size 700,450
set output "$OUT"
set datafile separator ","
set logscale xy
set xlabel "hidden width"; set ylabel "training steps / s"
set title "$TITLE"
set key top right
one(c) = ($split_col == 0 || column($split_col) == 1)
plot for [k in "$kinds"] "$CSV" every ::1 using 2:(strcol(1) eq k && one(0) ? column($col) : 1/0) with linespoints title k
GP
echo "render/bench_train: wrote $OUT"
