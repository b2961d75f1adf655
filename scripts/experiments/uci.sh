#!/usr/bin/env bash
# The paper's UCI regression protocol (WHVI paper, Section 3.2 and Table 3): 8 datasets x
# {NNG, NF-WHVI, MFG, VSD, WHVI, MCD, SGHMC, deep ensembles, Bayesian linear regression}, 72 configs
# configs/uci/<dataset>-<model>.yaml, plus the exact GP on the four sets within its row limit
# (model.gp.max_rows: boston, concrete, energy, yacht), each
# 8 random 90/10 splits.
# Runs them with scripts/sweep/sweep.sh (resumable: re-run the same command after an interruption),
# then renders results/uci/TABLE.md next to the paper's numbers.
#
#   scripts/experiments/uci.sh [-j JOBS] [--threads-per-job N] [--whvi PATH]
#
# Options go to scripts/sweep/sweep.sh unchanged. The table is rendered even when some runs failed
# (incomplete ones are marked in it); the exit status is then the sweep's.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")

DATASETS=(boston concrete energy kin8nm naval power protein yacht)
MODELS=(nng nf-whvi mfg vsd whvi mcd sghmc ensemble laplace swag blr)  # slowest kind first, so both jobs stay busy to the end
CONFIGS=()
missing=()
for m in "${MODELS[@]}"; do
  for d in "${DATASETS[@]}"; do
    cfg=configs/uci/$d-$m.yaml
    if [[ -f $cfg ]]; then CONFIGS+=("$cfg"); else missing+=("$cfg"); fi
  done
done
for d in boston concrete energy yacht; do  # the exact GP: the sets under 2,000 training rows
  cfg=configs/uci/$d-gp.yaml
  if [[ -f $cfg ]]; then CONFIGS+=("$cfg"); else missing+=("$cfg"); fi
done
if ((${#missing[@]})); then
  echo "experiments/uci: missing configs: ${missing[*]}" >&2
  exit 2
fi

rc=0
bash scripts/sweep/sweep.sh --whvi "$WHVI" "$@" "${CONFIGS[@]}" || rc=$?

shopt -s nullglob
results=(results/uci/*.json)
if ((${#results[@]} == 0)); then
  echo "experiments/uci: no result files in results/uci/; no table rendered" >&2
  exit $((rc ? rc : 1))
fi
"$WHVI" table "${results[@]}" --paper results/paper/whvi-neurips2020-table3.json --out results/uci/TABLE.md
echo "experiments/uci: table of ${#results[@]} result files in results/uci/TABLE.md"
exit "$rc"
