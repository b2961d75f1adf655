#!/usr/bin/env bash
# The paper's Table 2 and Fig. 2: WHVI with the weight
# structures of Table 2 beside MCD, 2 x 64 networks on LETTER and kin8nm
# (DRIVE, the paper's set, is not available here). Runs the configs of
# configs/analysis/ablation/ (GNU parallel, resumable), then writes
# results/analysis/ablation/TABLE.md and one curve PNG per data set.
#
#   scripts/experiments/ablation.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# PATTERN globs config stems (default '*'). WHVI=path/to/whvi to use another
# binary. About 25 CPU-minutes in all (1 thread per run).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh analysis_ablation configs/analysis/ablation '*' scripts/experiments/ablation.sh \
  bash scripts/render/ablation.sh -- "$@"
