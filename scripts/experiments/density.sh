#!/usr/bin/env bash
# results/density/ (its README.md): the networks with a mixture density per
# input (likelihood.kind mixture) on synthetic:bimodal and on Table 3's UCI
# sets, and the same networks with one Gaussian on synthetic:bimodal: runs
# configs/density/*.yaml (not base.yaml, their base) through
# scripts/sweep/sweep.sh (resumable), then renders results/density/TABLE.md
# (the mixtures) and results/density/gaussian/TABLE.md (the Gaussians: a table
# keys its cells by data set and model kind, so each likelihood has its own).
#
#   scripts/experiments/density.sh [-j JOBS] [--whvi PATH] [--set KEY=VALUE]...
#
# Options go to scripts/sweep/sweep.sh unchanged. The tables are rendered even
# when some runs failed; the exit status is then the sweep's.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")
configs=()
for c in configs/density/*.yaml; do [[ $c == */base.yaml ]] || configs+=("$c"); done
rc=0
bash scripts/sweep/sweep.sh --whvi "$WHVI" "$@" "${configs[@]}" || rc=$?
shopt -s nullglob
files=(results/density/*.json)
((${#files[@]})) && "$WHVI" table "${files[@]}" --paper '' --title "Beyond the Gaussian: a mixture density per input" \
  --out results/density/TABLE.md
files=(results/density/gaussian/*.json)
((${#files[@]})) && "$WHVI" table "${files[@]}" --paper '' --title "Beyond the Gaussian: one Gaussian per input" \
  --out results/density/gaussian/TABLE.md
exit "$rc"
