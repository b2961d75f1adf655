#!/usr/bin/env bash
# results/uci-student-t/: WHVI on Table 3's 8 UCI sets with the Student's t likelihood
# (`likelihood.kind: student-t`, learned degrees of freedom), split 0 of the paper's
# protocol, then results/uci-student-t/TABLE.md beside the paper's Table 3.
#
#   scripts/experiments/uci_student_t.sh [-j JOBS] [--whvi PATH] [--set KEY=VALUE]...
#
# Options go to scripts/sweep/sweep.sh unchanged (a later --set data.splits=8 runs all 8
# splits). Resumable: finished splits are kept.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")
configs=()
for d in protein power naval kin8nm concrete energy boston yacht; do configs+=("configs/uci/$d-whvi.yaml"); done
rc=0
bash scripts/sweep/sweep.sh --whvi "$WHVI" --set likelihood.kind=student-t --set data.splits=1 \
  --set output.dir=results/uci-student-t "$@" "${configs[@]}" || rc=$?
shopt -s nullglob
results=(results/uci-student-t/*.json)
((${#results[@]})) && "$WHVI" table "${results[@]}" --paper results/paper/whvi-neurips2020-table3.json \
  --title "WHVI with the Student's t likelihood, split 0 (Table 3's protocol)" --out results/uci-student-t/TABLE.md
exit "$rc"
