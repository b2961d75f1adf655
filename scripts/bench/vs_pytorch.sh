#!/usr/bin/env bash
# The training-step goals (WHVI >= 3x a plain MLP, MFG >= 3x Bayes by backprop),
# measured side by side on this machine: `whvi bench train` (autograd and fused
# engines, WHVI/MFG/MCD) against plain PyTorch 1.13 from Debian (scripts/bench/plain_pytorch_train.py: a deterministic MLP with Adam and a
# Bayes-by-backprop MLP), same synthetic problem (d_in 8, 1,000 rows, batch 64, depth 2),
# one thread, ROUNDS interleaved rounds (whvi, then PyTorch, then whvi ...), best of the
# rounds per row; scripts/bench/compare_vs_pytorch.py writes the table of ratios.
#
#   bash scripts/bench/vs_pytorch.sh OUT_PREFIX [ROUNDS=3] [WIDTHS=64,128,256]
#     e.g. bash scripts/bench/vs_pytorch.sh results/bench/cpu-epyc-train-vs-pytorch-1thread
#
# Writes OUT_PREFIX.md and OUT_PREFIX.json (the comparison) and OUT_PREFIX-runs/ (every
# round's JSON as the two programs wrote it). Needs python3-torch (Debian 12:
# `apt-get install python3-torch`; it installs into /usr/bin/python3, not a pyenv python)
# and a built whvi (WHVI=..., default build/whvi). Run it on an otherwise idle machine.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
(($# >= 1)) || { sed -n '2,15p' "$0" >&2; exit 2; }
out=$1 rounds=${2:-3} widths=${3:-64,128,256}
whvi=${WHVI:-build/whvi}
py=${PYTHON:-/usr/bin/python3}
[[ -x $whvi ]] || { echo "bench/vs_pytorch: no whvi binary at '$whvi' (build it, or set WHVI=...)" >&2; exit 2; }
"$py" -c 'import torch' 2>/dev/null || { echo "bench/vs_pytorch: '$py' cannot import torch (apt-get install python3-torch; or PYTHON=...)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/vs_pytorch: ROUNDS must be a positive integer (got '$rounds')" >&2; exit 2; }
[[ $widths =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench/vs_pytorch: WIDTHS must be a comma list of integers (got '$widths')" >&2; exit 2; }
runs=$out-runs
mkdir -p "$runs"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
kinds=whvi:training.engine=autograd,whvi:training.engine=fused,mfg:training.engine=autograd,mfg:training.engine=fused,mcd:training.engine=autograd,mcd:training.engine=fused
for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds: whvi" >&2
  "$whvi" --threads 1 bench train --kinds "$kinds" --widths "$widths" --steps 2000 --warmup 200 \
    --json "$runs/round$r-whvi.json" >&2
  echo "round $r/$rounds: plain PyTorch" >&2
  "$py" scripts/bench/plain_pytorch_train.py --kinds mlp,bbb --widths "$widths" --steps 2000 \
    --warmup 200 --threads 1 --json "$runs/round$r-pytorch.json" >&2
done
"$py" scripts/bench/compare_vs_pytorch.py --out "$out" "$runs"/round*-whvi.json "$runs"/round*-pytorch.json
