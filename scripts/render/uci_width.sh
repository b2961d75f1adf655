#!/usr/bin/env bash
# Renders what exists of results/uci-width/: TABLE.md (one table per width,
# Tables 11 and 12 of the paper: test RMSE and MNLL) and, for every data set
# with results, Fig. 5: fig5-<dataset>-rmse.png and fig5-<dataset>-mnll.png
# (the metric against the number of parameters, one line per model, error
# bars = std over splits). The CSV behind each figure is written beside it.
# TABLE.md opens with the cells of CONFIG_DIR (default configs/uci-width) that
# have no result in RESULTS_DIR yet.
#   scripts/render/uci_width.sh [RESULTS_DIR]     (default results/uci-width)
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-results/uci-width}
CONFIG_DIR=${CONFIG_DIR:-configs/uci-width}
WHVI=${WHVI:-build/whvi}
. scripts/render/widths.sh
widths_prelude uci_width "$DIR"
{
  echo "# UCI regression against the number of hidden units (the paper's Tables 11 and 12)"
  echo
  echo "Each section: 2 hidden layers of NF units. The paper's columns are empty: its Tables 11"
  echo "and 12 are not transcribed (results/paper holds Table 3, NF = 128)."
  echo
  bash scripts/render/list_missing.sh "$CONFIG_DIR" "$DIR" scripts/experiments/uci_width.sh
  echo
  width_sections "$DIR" '' ''
} >"$DIR/TABLE.md.tmp" && mv "$DIR/TABLE.md.tmp" "$DIR/TABLE.md"
echo "render/uci_width: wrote $DIR/TABLE.md"
command -v gnuplot >/dev/null || { echo "render/uci_width: gnuplot missing, no figures" >&2; exit 0; }
if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  TERMINAL='pngcairo size 700,480 enhanced font "sans,11"'
else
  TERMINAL='png size 700,480'
fi
for ds in $(for f in "${all[@]}"; do basename "$f" | sed -E 's/-(mcd|mfg|nng|whvi|nf-whvi|sghmc)-w[0-9]+\.json$//'; done | sort -u); do
  csv="$DIR/fig5-$ds.csv"
  files=("$DIR/$ds"-*-w*.json)
  "$WHVI" table --csv "${files[@]}" >"$csv"
  for metric in rmse mnll; do
    col=$([ $metric = rmse ] && echo 8 || echo 10)
    plots=""
    for m in mcd mfg nng whvi; do
      grep -q ",$ds,$m," "$csv" || continue
      grep ",$ds,$m," "$csv" | sort -t, -k6,6 -g >"$DIR/.fig5-$ds-$m.tmp"
      plots+="${plots:+, }'$DIR/.fig5-$ds-$m.tmp' using 6:$col:$((col + 1)) with yerrorlines lw 2 pt 7 title '${m^^}'"
    done
    [ -n "$plots" ] || continue
    gnuplot <<GP
set terminal $TERMINAL
set output '$DIR/fig5-$ds-$metric.png'
set datafile separator ','
set logscale x
set xlabel 'number of parameters'
set ylabel 'test ${metric^^}'
set title '$ds: test ${metric^^} against the number of parameters (NF = 64, 128, 256, 512)' noenhanced
set key top left
set grid
plot $plots
GP
    echo "render/uci_width: wrote $DIR/fig5-$ds-$metric.png"
  done
  rm -f "$DIR"/.fig5-"$ds"-*.tmp
done
