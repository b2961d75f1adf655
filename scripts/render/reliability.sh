#!/usr/bin/env bash
# Draws a reliability diagram like Fig. 6 of the WHVI paper: accuracy against
# confidence per equal-width confidence bin (bars; the diagonal is perfect
# calibration), with the number of test points per bin below.
#
#   scripts/render/reliability.sh BINS.csv OUT.png [TITLE]
#
# BINS.csv: the header lo,hi,count,accuracy,confidence, then one row per bin
# (empty bins have NaN accuracy); `whvi train` writes it for every
# classification result. Needs gnuplot (scripts/setup.sh installs gnuplot-nox).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
die() {
  echo "render/reliability: $*" >&2
  exit 2
}
(($# == 2 || $# == 3)) || die "usage: scripts/render/reliability.sh BINS.csv OUT.png [TITLE]"
CSV=$1
OUT=$2
TITLE=${3:-reliability}
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
[[ -f $CSV ]] || die "bins file '$CSV' not found"
[[ $(head -n 1 "$CSV" | tr -d '\r') == "lo,hi,count,accuracy,confidence" ]] ||
  die "'$CSV' does not start with the header lo,hi,count,accuracy,confidence"
if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  TERMINAL='pngcairo size 560,640 enhanced font "sans,10"'
else
  TERMINAL='png size 560,640'
fi
# gnuplot reads strings in single quotes: escape the title's quotes.
TITLE=${TITLE//\'/\'\'}
gnuplot <<GP
set terminal $TERMINAL
set output '$OUT'
set datafile separator ','
set datafile missing 'NaN'
set multiplot layout 2,1 title '$TITLE' noenhanced
set lmargin 10
set xrange [0:1]
set yrange [0:1]
set ylabel 'accuracy'
set style fill solid 0.6 border -1
set key top left
set grid
plot '$CSV' skip 1 using ((\$1+\$2)/2):4:(\$2-\$1) with boxes lc rgb '#3b6ea5' title 'accuracy per bin', \
     x with lines dt 2 lc rgb 'black' title 'perfect calibration'
set autoscale y
set yrange [0:*]
set xlabel 'confidence (largest predicted class probability)'
set ylabel 'test points'
plot '$CSV' skip 1 using ((\$1+\$2)/2):3:(\$2-\$1) with boxes lc rgb '#888888' notitle
unset multiplot
GP
