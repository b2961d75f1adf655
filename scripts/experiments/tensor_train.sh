#!/usr/bin/env bash
# The paper's Fig. 3: WHVI against a tensor-train
# variational factorisation at matched parameter counts, two hidden layers of
# 64, 128, 256 units on LETTER, test error and MNLL against iterations. Runs
# configs/analysis/tensor-train/ (GNU parallel, resumable), then writes
# results/analysis/tensor-train/TABLE.md and tensor-train.png.
#
#   scripts/experiments/tensor_train.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# About 15 CPU-minutes (1 thread per run). WHVI=path/to/whvi for another binary.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh analysis_tensor_train configs/analysis/tensor-train '*' scripts/experiments/tensor_train.sh \
  bash scripts/render/tensor_train.sh -- "$@"
