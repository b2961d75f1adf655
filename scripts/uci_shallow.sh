#!/usr/bin/env bash
# Table 6 of the WHVI paper: one hidden layer of 50 units (100 for protein) on
# the stored standard splits (20; protein 5) for MCD, MFG, NNG and WHVI
# (configs/uci-shallow/<dataset>-<model>.yaml -> results/uci-shallow/), then
# results/uci-shallow/TABLE.md beside the paper's Table 6:
#
#   scripts/uci_shallow.sh [-j JOBS] [--set KEY=VALUE]... [PATTERN]
#
# PATTERN selects configs by glob on the stem (default '*'). A Slurm array
# runs the same configs: ls configs/uci-shallow/*-*.yaml > shallow.txt;
# sbatch --array=0-31 scripts/slurm_sweep.sbatch shallow.txt; then run
# this script with --render-only.
set -euo pipefail
cd "$(dirname "$0")/.."
WHVI=${WHVI:-build/whvi}
args=()
render_only=0
while (($#)); do
  case $1 in
    -j|--set) args+=("$1" "$2"); shift 2 ;;
    --render-only) render_only=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "uci_shallow: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
pattern=${1:-*}
shopt -s nullglob
if ((!render_only)); then
  configs=()
  for c in configs/uci-shallow/$pattern.yaml; do [[ $(basename "$c") == base.yaml ]] || configs+=("$c"); done
  ((${#configs[@]})) || { echo "uci_shallow: no config matches $pattern" >&2; exit 2; }
  bash scripts/sweep.sh "${args[@]}" "${configs[@]}"
fi
results=(results/uci-shallow/*.json)
((${#results[@]})) || { echo "uci_shallow: no results yet" >&2; exit 2; }
"$WHVI" table "${results[@]}" --paper results/paper/whvi-neurips2020-table6.json \
  --title "UCI regression, 1 hidden layer (the paper's Table 6)" --out results/uci-shallow/TABLE.md
