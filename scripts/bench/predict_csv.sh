#!/usr/bin/env bash
# `whvi predict` (the user's path: a CSV file in, one line out per row) on
# 10,000 new rows of 784 inputs with 64 Monte Carlo samples, for classifiers
# of Fashion-MNIST's FC 750x3 shape, one thread against THREADS threads, the
# same binary, ROUNDS interleaved rounds. The data are random numbers written
# by awk (seeded; 2,000 rows to train on, 10,000 to predict); each network is
# trained for 50 steps only (a prediction's cost does not depend on what was
# learned). Checks that the outputs of every thread count are the same bytes.
#
#   bash scripts/bench/predict_csv.sh OUT_DIR [THREADS=2] [ROUNDS=1] [KINDS=whvi,mcd,mfg,nf-whvi,nng]
#
# Writes OUT_DIR/SUMMARY.md (seconds per kind and thread count, the ratio) and
# OUT_DIR/times.csv; WHVI=path/to/whvi for another binary (default build/whvi).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 1)) || { echo "usage: scripts/bench/predict_csv.sh OUT_DIR [THREADS] [ROUNDS] [KINDS]" >&2; exit 2; }
OUT=$1 T=${2:-2} ROUNDS=${3:-1} KINDS=${4:-whvi,mcd,mfg,nf-whvi,nng}
WHVI=${WHVI:-build/whvi}
[[ $T =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/predict_csv: THREADS and ROUNDS must be positive integers" >&2; exit 2; }
[[ -x $WHVI ]] || { echo "bench/predict_csv: no whvi binary at '$WHVI' (build it, or set WHVI=...)" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/random_table.sh"
fc750x3_bench "$work"
IFS=, read -ra kinds <<<"$KINDS"
for k in "${kinds[@]}"; do
  "$WHVI" --threads 1 --log-level warn train --config "$work/fc750x3.yaml" --set model.kind="$k" \
    --set output.name="$k" >/dev/null
done
echo "round,kind,threads,seconds" >"$OUT/times.csv"
for r in $(seq 1 "$ROUNDS"); do
  for k in "${kinds[@]}"; do
    for t in 1 "$T"; do
      t0=$(date +%s%N)
      "$WHVI" --threads "$t" --log-level warn predict --checkpoint "$work/runs/$k/split-00.ckpt" --input "$work/new.csv" \
        --mc-samples 64 --out "$work/$k-t$t-r$r.csv"
      echo "$r,$k,$t,$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" >>"$OUT/times.csv"
      cmp -s "$work/$k-t$t-r$r.csv" "$work/$k-t1-r1.csv" || { echo "bench/predict_csv: $k's predictions on $t threads differ from one thread's" >&2; exit 1; }
    done
  done
done
{
  echo "# whvi predict: 10,000 rows x 64 samples, FC 750x3 classifiers, 1 against $T threads"
  echo
  echo "Written by \`scripts/bench/predict_csv.sh\` ($(date -u +%Y-%m-%d), $("$WHVI" --version | head -1), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $ROUNDS round(s), best of them). Every thread count's output was the same bytes as one thread's."
  echo
  echo "| kind | 1 thread (s) | $T threads (s) | speed-up |"
  echo "|---|---:|---:|---:|"
  for k in "${kinds[@]}"; do
    a=$(awk -F, -v k="$k" '$2 == k && $3 == 1 { if (m == "" || $4 < m) m = $4 } END { print m }' "$OUT/times.csv")
    b=$(awk -F, -v k="$k" -v t="$T" '$2 == k && $3 == t { if (m == "" || $4 < m) m = $4 } END { print m }' "$OUT/times.csv")
    awk -v k="$k" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.1f | %.1f | %.2fx |\n", k, a, b, a / b }'
  done
} >"$OUT/SUMMARY.md"
cat "$OUT/SUMMARY.md"
