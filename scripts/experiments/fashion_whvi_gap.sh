#!/usr/bin/env bash
# Why WHVI's Fashion-MNIST FC 400x2 error is above MC dropout's, on validation
# images only: the committed runs' protocol with 10% of the training images held
# out and learning curves on validation and training images; one candidate per
# config of configs/analysis/fashion-whvi-gap/ (each changes one thing, fixed
# before any run). Runs them (GNU parallel, resumable), then writes
# results/analysis/fashion-whvi-gap/TABLE.md, curves.png and curves-train.png.
#
#   scripts/experiments/fashion_whvi_gap.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# About 40 CPU-minutes (1 thread per run; the 60,000-step run and MC dropout
# are the longest). WHVI=path/to/whvi for another binary.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh analysis_fashion_whvi_gap configs/analysis/fashion-whvi-gap '*' \
  scripts/experiments/fashion_whvi_gap.sh bash scripts/render/fashion_whvi_gap.sh -- "$@"
