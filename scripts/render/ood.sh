#!/usr/bin/env bash
# Draws the out-of-distribution histograms of a classifier (evaluation.ood_dataset):
# the share of test rows (in distribution) and of out-of-distribution rows per bin
# of predictive entropy (top) and of mutual information (bottom).
#
#   scripts/render/ood.sh OOD.csv OUT.png [TITLE]
#
# OOD.csv: the header score,lo,hi,in,out, then one row per bin for the scores
# "entropy" and "mutual_information"; `whvi train` writes it beside each split
# record (split-KK-ood.csv). Needs gnuplot (scripts/setup.sh installs gnuplot-nox).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
die() {
  echo "render/ood: $*" >&2
  exit 2
}
(($# == 2 || $# == 3)) || die "usage: scripts/render/ood.sh OOD.csv OUT.png [TITLE]"
CSV=$1
OUT=$2
TITLE=${3:-out-of-distribution}
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
[[ -f $CSV ]] || die "histogram file '$CSV' not found"
[[ $(head -n 1 "$CSV" | tr -d '\r') == "score,lo,hi,in,out" ]] || die "'$CSV' does not start with the header score,lo,hi,in,out"
if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  TERMINAL='pngcairo size 600,640 enhanced font "sans,10"'
else
  TERMINAL='png size 600,640'
fi
TITLE=${TITLE//\'/\'\'}
gnuplot <<GP
set terminal $TERMINAL
set output '$OUT'
set datafile separator ','
set multiplot layout 2,1 title '$TITLE' noenhanced
set style fill transparent solid 0.5 border -1
set ylabel 'share of rows'
set grid
set key top right
set xlabel 'predictive entropy (nats)'
plot '$CSV' skip 1 using ((strcol(1) eq 'entropy') ? (\$2+\$3)/2 : NaN):4:(\$3-\$2) with boxes lc rgb '#3b6ea5' title 'test rows (in distribution)', \
     '' skip 1 using ((strcol(1) eq 'entropy') ? (\$2+\$3)/2 : NaN):5:(\$3-\$2) with boxes lc rgb '#c0392b' title 'out of distribution'
set xlabel 'mutual information (nats)'
plot '$CSV' skip 1 using ((strcol(1) eq 'mutual_information') ? (\$2+\$3)/2 : NaN):4:(\$3-\$2) with boxes lc rgb '#3b6ea5' title 'test rows (in distribution)', \
     '' skip 1 using ((strcol(1) eq 'mutual_information') ? (\$2+\$3)/2 : NaN):5:(\$3-\$2) with boxes lc rgb '#c0392b' title 'out of distribution'
unset multiplot
GP
