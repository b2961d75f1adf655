#!/usr/bin/env bash
# The paper's Fig. 7 on the CIFAR-10 subset: the simple CNN
# with MCD, MCD + WHVI linear layer, WHVI filters, and low-rank MCD with as
# many parameters as WHVI; test error and MNLL against iterations. Runs
# configs/cifar10/fig7/ (GNU parallel, resumable), then writes
# results/cifar10-mini/fig7/TABLE.md and fig7.png.
#
#   scripts/experiments/cifar10_fig7.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# About 20 CPU-minutes (1 thread per run). WHVI=path/to/whvi for another binary.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --render ]]; then
  DIR=results/cifar10-mini/fig7
  files=()
  for v in mcd mcd-whvi whvi lowrank-mcd; do [[ -f $DIR/$v.json ]] && files+=("$DIR/$v.json"); done
  ((${#files[@]})) || { echo "cifar10_fig7: no results in $DIR" >&2; exit 2; }
  {
    echo "# The simple CNN with four treatments of its parameters (the paper's Fig. 7), CIFAR-10 subset"
    echo
    echo "Two 3x3 convolutions (32, 64 channels, 2x2 max pooling) and one linear layer on the"
    echo "repository's 2,000/1,000-image subset, 2,000 steps of batch 32 (configs/cifar10/fig7/). A subset"
    echo "with a shortened schedule: not comparable with the paper's figure, only its ordering. The paper"
    echo "finds MCD + WHVI best, WHVI on the filters worse, and low-rank MCD worse than MCD."
    echo "Curves: fig7.png."
    echo
    python3 scripts/render/analysis_table.py "CIFAR-10 subset" error,mnll,ece "${files[@]}"
  } >"$DIR/TABLE.md.tmp" && mv "$DIR/TABLE.md.tmp" "$DIR/TABLE.md"
  bash scripts/render/curves.sh "$DIR/fig7.png" "Simple CNN on the CIFAR-10 subset (Fig. 7)" error mnll "${files[@]}" >/dev/null
  echo "cifar10_fig7: wrote $DIR/TABLE.md and $DIR/fig7.png"
  exit 0
fi
exec bash scripts/sweep/grid.sh cifar10_fig7 configs/cifar10/fig7 '*' scripts/experiments/cifar10_fig7.sh \
  bash scripts/experiments/cifar10_fig7.sh --render -- "$@"
