#!/usr/bin/env bash
# The user's path against plain PyTorch at the yacht shape: `whvi train` of yacht's
# WHVI and MFG configs (Table 3's networks: 2 x 128, batch 64; 1 split, 500 + 3,000
# steps, evaluation with 64 samples) against plain PyTorch 1.13 (scripts/bench/plain_pytorch_train.py:
# a deterministic MLP with Adam and a Bayes-by-backprop MLP, the same widths and batch,
# 6 inputs, 277 rows), one thread each, ROUNDS interleaved rounds (whvi, then PyTorch, ...).
# whvi's steps/s is its record's (`steps_per_second`: the training loop, data batches
# included); its whole-command time is the record's `wall_seconds`. Then
# scripts/bench/user_path_summary.py writes OUT_DIR/SUMMARY.md (best of the rounds, ratios).
#
#   bash scripts/bench/user_path_vs_pytorch.sh OUT_DIR [ROUNDS=3]
#
# Needs python3-torch (Debian 12: apt-get install python3-torch, into /usr/bin/python3), a built
# whvi (WHVI=..., default build/whvi) and WHVI_DATA_DIR (yacht). Run it on an idle machine.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
(($# >= 1)) || { echo "usage: scripts/bench/user_path_vs_pytorch.sh OUT_DIR [ROUNDS]" >&2; exit 2; }
OUT=$1 ROUNDS=${2:-3}
WHVI=${WHVI:-build/whvi} PY=${PYTHON:-/usr/bin/python3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/user_path_vs_pytorch: ROUNDS must be a positive integer (got '$ROUNDS')" >&2; exit 2; }
[[ -x $WHVI ]] || { echo "bench/user_path_vs_pytorch: no whvi binary at '$WHVI' (build it, or set WHVI=...)" >&2; exit 2; }
"$PY" -c 'import torch' 2>/dev/null || { echo "bench/user_path_vs_pytorch: '$PY' cannot import torch (apt-get install python3-torch)" >&2; exit 2; }
mkdir -p "$OUT"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for r in $(seq 1 "$ROUNDS"); do
  for k in whvi mfg; do
    "$WHVI" --threads 1 --log-level warn train --config "configs/uci/yacht-$k.yaml" --set data.splits=1 \
      --set training.steps=3000 --set output.dir="$OUT" --set output.name="whvi-train-$k-r$r" --set output.checkpoints=false \
      --set output.plot=false
  done
  "$PY" scripts/bench/plain_pytorch_train.py --kinds mlp,bbb --widths 128 --d-in 6 --rows 277 --batch 64 \
    --steps 3000 --warmup 200 --threads 1 --json "$OUT/pytorch-r$r.json" >&2
done
rm -rf "$OUT"/whvi-train-*-r[0-9]*/  # the split folders; the experiment records stay
"$PY" scripts/bench/user_path_summary.py "$OUT" >"$OUT/SUMMARY.md"
cat "$OUT/SUMMARY.md"
