#!/usr/bin/env bash
# Regenerates the committed results from the current build, in this order:
#   1. results/synthetic/  the built-in problems with a known noise floor (configs/synthetic/)
#   2. results/uci/        the paper protocol on the 8 UCI data sets (configs/uci/), Table 3
#   3. the tables beside them (TABLE.md)
# Resumable: each experiment keeps its finished splits, so re-running the same
# command after an interruption, or without --set data.splits=N after a first
# shortened pass, only trains what is missing.
#
#   scripts/regenerate_results.sh [-j JOBS] [--set KEY=VALUE]... [synthetic|uci]...
#
# Example (what the committed results ran): a first pass of 4 splits, then the rest:
#   scripts/regenerate_results.sh -j 2 --set data.splits=4
#   scripts/regenerate_results.sh -j 2
set -euo pipefail
cd "$(dirname "$0")/.."
WHVI=${WHVI:-${BUILD_DIR:-build}/whvi}
opts=()
parts=()
while (($#)); do
  case $1 in
    -j | --set | --whvi) opts+=("$1" "$2"); [[ $1 == --whvi ]] && WHVI=$2; shift 2 ;;
    synthetic | uci) parts+=("$1"); shift ;;
    *) opts+=("$1"); shift ;;
  esac
done
((${#parts[@]})) || parts=(synthetic uci)
rc=0
for part in "${parts[@]}"; do
  case $part in
    synthetic)
      # slowest kind first, so both jobs stay busy to the end
      bash scripts/sweep.sh --whvi "$WHVI" "${opts[@]}" configs/synthetic/*-mfg.yaml configs/synthetic/*-whvi.yaml \
        configs/synthetic/*-mcd.yaml || rc=$?
      shopt -s nullglob
      files=(results/synthetic/*.json)
      ((${#files[@]})) && "$WHVI" table "${files[@]}" --paper '' --title "Synthetic problems with a known noise floor" \
        --out results/synthetic/TABLE.md
      ;;
    uci)
      bash scripts/sweep_uci.sh --whvi "$WHVI" "${opts[@]}" || rc=$?
      ;;
  esac
done
exit "$rc"
