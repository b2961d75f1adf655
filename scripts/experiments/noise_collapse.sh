#!/usr/bin/env bash
# Why the learned noise collapses under the WHVI paper's fixed schedule on boston
# (455 rows): Table 3's runs of WHVI, MC dropout, NF-WHVI and MFG (500 + 50,000
# steps) with 20% of each split's training rows held out as validation rows (the
# test rows are never read) and a learning curve every 2,500 steps, 2 splits.
# Runs configs/analysis/noise-collapse/ (GNU parallel, resumable), then writes
# results/analysis/noise-collapse/TABLE.md and noise-collapse.png.
#
#   scripts/experiments/noise_collapse.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# About 3 CPU-minutes (1 thread per run). WHVI=path/to/whvi for another binary.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh analysis_noise_collapse configs/analysis/noise-collapse '*' \
  scripts/experiments/noise_collapse.sh bash scripts/render/noise_collapse.sh -- "$@"
