#!/usr/bin/env bash
# Tables 11 and 12 and Fig. 5 of the WHVI paper: the UCI protocol with 64, 128,
# 256 and 512 hidden units per layer for MCD, MFG, NNG and WHVI
# (configs/uci-width/<dataset>-<model>-w<NF>.yaml, results in
# results/uci-width/<dataset>-<model>-w<NF>.json), then the tables and figures:
#
#   scripts/experiments/uci_width.sh [-j JOBS] [--set KEY=VALUE]... [PATTERN]
#
# PATTERN selects configs by glob on the file stem (default '*': all 128; e.g.
# 'yacht-*' for Fig. 5 alone). Runs scripts/sweep/sweep.sh (GNU parallel, each run
# resumes its finished splits), then scripts/render/uci_width.sh. On a Slurm
# cluster instead:
#   ls configs/uci-width/*.yaml > width.txt
#   sbatch --array=0-127 scripts/sweep/slurm.sbatch width.txt
#   scripts/render/uci_width.sh        # when the array is done
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh uci_width configs/uci-width '*' scripts/experiments/uci_width.sh bash scripts/render/uci_width.sh -- "$@"
