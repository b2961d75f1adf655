#!/usr/bin/env bash
# MNIST-mini: MCD, MFG, WHVI and VSD with the VSD paper's
# FC 400x2 and 750x3 (configs/mnist/*.yaml, results/mnist-mini/<name>.json with
# a reliability diagram beside each), then results/mnist-mini/TABLE-<arch>.md:
#
#   scripts/experiments/mnist_mini.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# PATTERN globs config stems (default '*'; e.g. '*-fc400x2').
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --render-table ]]; then
  shopt -s nullglob
  for arch in fc400x2 fc750x3; do
    results=(results/mnist-mini/*-"$arch".json)
    ((${#results[@]})) || continue
    "${WHVI:-build/whvi}" table "${results[@]}" --paper '' \
      --title "MNIST-mini, $arch (2,000 training / 1,000 test images; a subset, shortened schedule)" \
      --out "results/mnist-mini/TABLE-$arch.md"
  done
  exit 0
fi
exec bash scripts/sweep/grid.sh mnist_mini configs/mnist '*' scripts/experiments/mnist_mini.sh bash scripts/experiments/mnist_mini.sh --render-table -- "$@"
