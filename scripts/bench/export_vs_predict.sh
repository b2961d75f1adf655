#!/usr/bin/env bash
# `whvi export` of an FC 750x3 classifier (784 inputs, Fashion-MNIST's shape)
# and ONNX Runtime's time for 10,000 rows x 64 samples, beside `whvi predict`'s
# on the same rows, the same machine and thread count. The data are random
# numbers written by awk (seeded; 2,000 rows to train on, 10,000 to predict);
# the network is trained for 50 steps only (a prediction's cost does not
# depend on what was learned). Needs node and tests/export/node_modules
# (scripts/test.sh installs onnxruntime-node there).
#
#   bash scripts/bench/export_vs_predict.sh OUT_DIR [THREADS=2] [KINDS=whvi,mcd,mfg]
#
# Writes OUT_DIR/SUMMARY.md and OUT_DIR/times.csv; WHVI=path/to/whvi for
# another binary (default build/whvi).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 1)) || { echo "usage: scripts/bench/export_vs_predict.sh OUT_DIR [THREADS] [KINDS]" >&2; exit 2; }
OUT=$1 T=${2:-2} KINDS=${3:-whvi,mcd,mfg}
WHVI=${WHVI:-build/whvi}
HERE=$(cd "$(dirname "$0")" && pwd)
[[ $T =~ ^[1-9][0-9]*$ ]] || { echo "bench/export_vs_predict: THREADS must be a positive integer" >&2; exit 2; }
[[ -x $WHVI ]] || { echo "bench/export_vs_predict: no whvi binary at '$WHVI' (build it, or set WHVI=...)" >&2; exit 2; }
[[ -d $HERE/../../tests/export/node_modules/onnxruntime-node ]] ||
  { echo "bench/export_vs_predict: onnxruntime-node is not installed (bash scripts/test.sh installs it)" >&2; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/random_table.sh"
fc750x3_bench "$work"
cols=$(head -1 "$work/new.csv" | sed 's/,label$//')
secs() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
echo "kind,threads,export_seconds,onnx_mb,whvi_predict_seconds,onnxruntime_seconds" >"$OUT/times.csv"
IFS=, read -ra kinds <<<"$KINDS"
for k in "${kinds[@]}"; do
  "$WHVI" --threads "$T" --log-level warn train --config "$work/fc750x3.yaml" --set model.kind="$k" \
    --set output.name="$k" >/dev/null
  ck=$work/runs/$k/split-00.ckpt
  t0=$(date +%s%N)
  "$WHVI" --threads "$T" --log-level warn export --checkpoint "$ck" --out "$work/$k.onnx" --mc-samples 64
  te=$(secs "$t0")
  mb=$(awk -v b="$(stat -c %s "$work/$k.onnx")" 'BEGIN { printf "%.1f", b / 1e6 }')
  t0=$(date +%s%N)
  "$WHVI" --threads "$T" --log-level warn predict --checkpoint "$ck" --input "$work/new.csv" --mc-samples 64 \
    --out "$work/$k.csv"
  tp=$(secs "$t0")
  to=$(node "$HERE/ort_time.js" "$work/$k.onnx" "$work/new.csv" "$cols" "$T" | sed 's/.*"seconds":\([0-9.]*\).*/\1/')
  echo "$k,$T,$te,$mb,$tp,$to" >>"$OUT/times.csv"
done
ortv=$(node -e "console.log(require('$HERE/../../tests/export/node_modules/onnxruntime-node/package.json').version)")
{
  echo "# whvi export: FC 750x3 classifiers, 10,000 rows x 64 samples, whvi predict against ONNX Runtime ($T threads)"
  echo
  echo "Written by \`scripts/bench/export_vs_predict.sh\` ($(date -u +%Y-%m-%d), $("$WHVI" --version | head -1), onnxruntime-node $ortv, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $("$WHVI" --version | grep -o 'active [a-z0-9]*'), $(nproc) cores, $T threads). ONNX Runtime's time is its session.run calls on 250-row chunks (the CSV parsed beforehand); whvi predict's is the whole command (CSV in, CSV out)."
  echo
  echo "| kind | export (s) | ONNX file (MB) | whvi predict (s) | ONNX Runtime (s) |"
  echo "|---|---:|---:|---:|---:|"
  tail -n +2 "$OUT/times.csv" | awk -F, '{ printf "| %s | %s | %s | %s | %s |\n", $1, $3, $4, $5, $6 }'
} >"$OUT/SUMMARY.md"
cat "$OUT/SUMMARY.md"
