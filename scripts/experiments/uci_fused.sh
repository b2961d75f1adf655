#!/usr/bin/env bash
# results/uci-fused/: Table 3's MCD, MFG and WHVI (8 UCI sets, 8 random 90/10 splits, the
# paper's schedule) trained with the fused step (`training.engine: fused`), then
# results/uci-fused/TABLE.md beside the paper's numbers and ENGINES.md, which compares each
# split with the same split of results/uci/ (trained by the engine its record names).
#
#   scripts/experiments/uci_fused.sh [-j JOBS] [--whvi PATH] [--set KEY=VALUE]...
#
# Options go to scripts/sweep/sweep.sh unchanged. Resumable: finished splits are kept.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")
configs=()
for m in mfg mcd whvi; do  # slowest kind first, largest sets first: both jobs stay busy to the end
  for d in naval protein power kin8nm concrete energy boston yacht; do configs+=("configs/uci/$d-$m.yaml"); done
done
rc=0
# the initial noise variance these ran with (whvi and mcd now default to 0)
bash scripts/sweep/sweep.sh --whvi "$WHVI" "$@" --set training.engine=fused --set output.dir=results/uci-fused \
  --set likelihood.init_log_noise_var=-1.5 \
  "${configs[@]}" || rc=$?
shopt -s nullglob
results=(results/uci-fused/*.json)
if ((${#results[@]})); then
  "$WHVI" table "${results[@]}" --paper results/paper/whvi-neurips2020-table3.json --out results/uci-fused/TABLE.md
  python3 scripts/render/compare_engines.py results/uci results/uci-fused results/uci-fused/ENGINES.md
fi
exit "$rc"
