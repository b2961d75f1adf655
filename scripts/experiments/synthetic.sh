#!/usr/bin/env bash
# results/synthetic/: the built-in problems with a known noise floor (configs/synthetic/:
# friedman, gap, hetero, highdim, linear x MCD, MFG, WHVI, deep ensembles at their defaults,
# and Bayesian linear regression as the reference), then results/synthetic/TABLE.md.
# Resumable: each experiment keeps its finished splits, so re-running the same command
# after an interruption, or without --set data.splits=N after a shortened pass, only
# trains what is missing.
#
#   scripts/experiments/synthetic.sh [-j JOBS] [--whvi PATH] [--set KEY=VALUE]...
#
# Options go to scripts/sweep/sweep.sh unchanged. The table is rendered even when some
# runs failed (incomplete ones are marked in it); the exit status is then the sweep's.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")
rc=0
# slowest kind first, so both jobs stay busy to the end
bash scripts/sweep/sweep.sh --whvi "$WHVI" "$@" configs/synthetic/*-mfg.yaml configs/synthetic/*-ensemble.yaml \
  configs/synthetic/*-whvi.yaml configs/synthetic/*-mcd.yaml configs/synthetic/*-blr.yaml || rc=$?
shopt -s nullglob
files=(results/synthetic/*.json)
((${#files[@]})) && "$WHVI" table "${files[@]}" --paper '' --title "Synthetic problems with a known noise floor" \
  --out results/synthetic/TABLE.md
exit "$rc"
