#!/usr/bin/env bash
# Prediction of 10,000 inputs with 64 Monte Carlo samples, as an experiment's
# evaluation makes it (every row in one pass per sample: `--batch 10000`), for
# the Fashion-MNIST fully connected nets (784 inputs, 10 classes; FC 400x2 and
# FC 750x3) and every variational kind, with whvi's default thread count. Two
# binaries side by side, one round after the other (A then B), so a change's
# effect is a ratio measured on one machine in one run.
#
#   scripts/bench/predict_10k.sh OUT_DIR WHVI_A [WHVI_B] [ROUNDS=1] [KINDS=nf-whvi,whvi,mcd,mfg,vsd]
#
# Writes OUT_DIR/<binary's file name>-fc<width>x<depth>-r<round>.json (whvi's own
# JSON: command, commit, machine, threads, seconds per kind).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 2)) || { echo "usage: scripts/bench/predict_10k.sh OUT_DIR WHVI_A [WHVI_B] [ROUNDS] [KINDS]" >&2; exit 2; }
OUT=$1 A=$2 B=${3:-} ROUNDS=${4:-1} KINDS=${5:-nf-whvi,whvi,mcd,mfg,vsd}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/predict_10k: ROUNDS must be a positive integer (got '$ROUNDS')" >&2; exit 2; }
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for bin in "$A" ${B:+"$B"}; do
    [[ -x $bin ]] || { echo "bench/predict_10k: no whvi binary at '$bin'" >&2; exit 2; }
    for arch in 400:2 750:3; do
      w=${arch%:*} d=${arch#*:}
      "$bin" bench predict --kinds "$KINDS" --widths "$w" --depth "$d" --d-in 784 --classes 10 --rows 10000 \
        --batch 10000 --mc 64 --repeats 1 --json "$OUT/$(basename "$bin")-fc${w}x${d}-r$r.json"
    done
  done
done
