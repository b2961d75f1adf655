#!/usr/bin/env bash
# Table 6 of the WHVI paper: one hidden layer of 50 units (100 for protein) on
# the stored standard splits (20; protein 5) for MCD, MFG, NNG, WHVI, deep ensembles and BLR
# (configs/uci-shallow/<dataset>-<model>.yaml -> results/uci-shallow/), then
# results/uci-shallow/TABLE.md beside the paper's Table 6:
#
#   scripts/experiments/uci_shallow.sh [-j JOBS] [--set KEY=VALUE]... [PATTERN]
#
# PATTERN selects configs by glob on the stem (default '*'). TITLE_NOTE=... adds a
# note to the table's title (e.g. how many of the standard splits were run). A Slurm array
# runs the same configs: ls configs/uci-shallow/*-*.yaml > shallow.txt;
# sbatch --array=0-31 scripts/sweep/slurm.sbatch shallow.txt; then run
# this script with --render-only.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --render-table ]]; then
  shopt -s nullglob
  results=(results/uci-shallow/*.json)
  ((${#results[@]})) || { echo "uci_shallow: no results yet" >&2; exit 2; }
  exec "${WHVI:-build/whvi}" table "${results[@]}" --paper results/paper/whvi-neurips2020-table6.json \
    --title "UCI regression, 1 hidden layer (the paper's Table 6)${TITLE_NOTE:+; $TITLE_NOTE}" --out results/uci-shallow/TABLE.md
fi
exec bash scripts/sweep/grid.sh uci_shallow configs/uci-shallow '*' scripts/experiments/uci_shallow.sh bash scripts/experiments/uci_shallow.sh --render-table -- "$@"
