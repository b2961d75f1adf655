#!/usr/bin/env bash
# The paper's Figs. 8 and 16: prediction time on a test set (batches of 128,
# 64 Monte Carlo samples per point) for MCD and WHVI, with `whvi bench
# predict`, one thread: the UCI MLPs (2 hidden layers, widths 64 ... 1024,
# 8 inputs, 1,024 test rows) and the simple CNN of Fig. 7 (CIFAR-10 shape,
# 256 test images). Writes results/bench/<name>-predict-{mlp,cnn}.{json,csv}
# and predict-{mlp,cnn}.png (seconds per test set against width; per model
# for the CNN, with the repeats' std).
#
#   scripts/bench/predict.sh NAME      (e.g. cpu-epyc-1thread)
#   PLOT_ONLY=1 scripts/bench/predict.sh NAME   renders the figures of existing CSVs
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
name=${1:?usage: scripts/bench/predict.sh NAME}
WHVI=${WHVI:-build/whvi}
out=results/bench
if [ -z "${PLOT_ONLY:-}" ]; then
"$WHVI" --threads 1 bench predict --kinds mcd,whvi,mfg --widths 64,128,256,512,1024 --rows 1024 --repeats 5 \
  --json "$out/$name-predict-mlp.json" --csv "$out/$name-predict-mlp.csv"
"$WHVI" --threads 1 bench predict --kinds mcd,whvi --widths 128 --depth 0 --d-in 3072 --classes 10 --rows 256 \
  --repeats 3 --set model.architecture=simple-cnn --set model.output_layer=same \
  --json "$out/$name-predict-cnn.json" --csv "$out/$name-predict-cnn.csv"
fi
command -v gnuplot >/dev/null || { echo "bench/predict: gnuplot missing, no figure" >&2; exit 0; }
csv=$out/$name-predict-mlp.csv
kinds=$(tail -n +2 "$csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
gnuplot <<GP
set terminal pngcairo size 700,450
set output "$out/$name-predict-mlp.png"
set datafile separator ","
set logscale xy
set xlabel "hidden width (2 hidden layers)"; set ylabel "seconds per test set (1,024 rows x 64 samples)"
set title "whvi bench predict, one thread ($name)"
set key top left
plot for [k in "$kinds"] "$csv" every ::1 using 2:(strcol(1) eq k ? \$4 : 1/0) with linespoints title k
GP
cnn=$out/$name-predict-cnn.csv
gnuplot <<GP
set terminal pngcairo size 500,400
set output "$out/$name-predict-cnn.png"
set datafile separator ","
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.5 border -1
set yrange [0:*]
set ylabel "seconds per test set (256 images x 64 samples)"
set title "whvi bench predict, simple CNN, one thread ($name)" font ",10"
unset key
plot "$cnn" every ::1 using 4:5:xtic(1)
GP
echo "bench/predict: wrote $out/$name-predict-*"
