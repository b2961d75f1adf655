#!/usr/bin/env bash
# The paper's Fig. 13: GPs with random Fourier features,
# the weights mean-field Gaussian or WHVI with the reshape trick, on borehole,
# hartmann6, rastrigin5, robot and otlcircuit; test RMSE and MNLL against the
# number of parameters (N_RF = 16 ... 1024). Runs configs/analysis/gp-rff/
# (GNU parallel, resumable), then writes results/analysis/gp-rff/TABLE.md,
# gp-rff-rmse.png and gp-rff-mnll.png (one PNG per row of the figure).
#
#   scripts/experiments/gp_rff.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# About 30 CPU-minutes (1 thread per run). WHVI=path/to/whvi for another binary.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh analysis_gp_rff configs/analysis/gp-rff '*' scripts/experiments/gp_rff.sh \
  bash scripts/render/gp_rff.sh -- "$@"
