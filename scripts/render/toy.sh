#!/usr/bin/env bash
# Plots a 1-D regression fit like Fig. 4 of the WHVI paper: the predictive mean, shaded 95% and
# 75% bands, and the training points.
#
#   scripts/render/toy.sh PRED.csv DATA.csv OUT.png [TITLE]
#
# PRED.csv: a header line naming the columns x,mean,std,lo95,hi95,lo75,hi75 (any order, extra
#           columns ignored; std is not drawn), then one row per test input.
# DATA.csv: a header line naming x,y, then the training points.
# Needs gnuplot (scripts/setup.sh installs gnuplot-nox); uses the pngcairo terminal when
# available, else png.
. "$(dirname "$0")/../help.sh"
set -euo pipefail

die() {
  echo "render/toy: $*" >&2
  exit 2
}

(($# == 3 || $# == 4)) || die "usage: scripts/render/toy.sh PRED.csv DATA.csv OUT.png [TITLE]"
PRED=$1
DATA=$2
OUT=$3
TITLE=${4:-}
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
[[ -f $PRED ]] || die "predictions file '$PRED' not found"
[[ -f $DATA ]] || die "data file '$DATA' not found"

# 1-based index of column $2 in the header line of file $1 (commas; spaces, quotes, CR ignored).
column_of() {
  local idx
  idx=$(head -n 1 "$1" | tr -d ' \r"' | tr ',' '\n' | grep -n -x -F -- "$2" | head -n 1 | cut -d: -f1) || true
  [[ -n $idx ]] || die "'$1' has no column '$2' in its header line: $(head -n 1 "$1")"
  echo "$idx"
}
cx=$(column_of "$PRED" x)
cmean=$(column_of "$PRED" mean)
clo95=$(column_of "$PRED" lo95)
chi95=$(column_of "$PRED" hi95)
clo75=$(column_of "$PRED" lo75)
chi75=$(column_of "$PRED" hi75)
dx=$(column_of "$DATA" x)
dy=$(column_of "$DATA" y)
(($(wc -l <"$PRED") >= 2)) || die "'$PRED' has no rows after its header"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Bands are drawn between consecutive rows, so sort the predictions by x (header dropped).
tail -n +2 "$PRED" | tr -d '\r' | grep -v '^[[:space:]]*$' | sort -t, -k"$cx","$cx" -g >"$tmp/pred.csv"
tail -n +2 "$DATA" | tr -d '\r' | grep -v '^[[:space:]]*$' >"$tmp/data.csv" || die "'$DATA' has no rows after its header"

if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  terminal='pngcairo size 900,560 enhanced font "sans,12"'
else
  terminal='png size 900,560'
fi
mkdir -p "$(dirname "$OUT")"

# Strings go to gnuplot as variables (-e), so quotes in the title or paths cannot break the script.
gnuplot \
  -e "pred='$tmp/pred.csv'; data='$tmp/data.csv'; out='${OUT//\'/\'\'}'; plot_title='${TITLE//\'/\'\'}'" \
  -e "cx=$cx; cmean=$cmean; clo95=$clo95; chi95=$chi95; clo75=$clo75; chi75=$chi75; dx=$dx; dy=$dy" \
  -e "set terminal $terminal" \
  - <<'GNUPLOT'
set output out
set datafile separator ","
if (strlen(plot_title) > 0) set title plot_title noenhanced
set xlabel "x"
set ylabel "y"
set key top left box opaque
set grid lc rgb "#e0e0e0"
set style fill transparent solid 1.0 noborder
plot pred using (column(cx)):(column(clo95)):(column(chi95)) with filledcurves lc rgb "#c6dbef" title "95% interval", \
     pred using (column(cx)):(column(clo75)):(column(chi75)) with filledcurves lc rgb "#6baed6" title "75% interval", \
     pred using (column(cx)):(column(cmean)) with lines lw 2.5 lc rgb "#08306b" title "predictive mean", \
     data using (column(dx)):(column(dy)) with points pt 7 ps 0.6 lc rgb "#000000" title "data"
GNUPLOT
echo "render/toy: wrote $OUT"
