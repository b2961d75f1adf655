#!/usr/bin/env bash
# Fashion-MNIST (the full 60,000 / 10,000 images from Debian's dataset-fashion-mnist):
# MCD, MFG, NNG, WHVI, NF-WHVI and VSD with the VSD paper's FC 400x2 and 750x3, and
# simple-cnn with MCD and WHVI heads (configs/fashion-mnist/*.yaml), each scoring
# mnist-mini as out-of-distribution, then results/fashion-mnist/TABLE-<arch>.md:
#
#   scripts/experiments/fashion_mnist.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# PATTERN globs config stems (default '*'; e.g. '*-fc400x2'). Each run resumes.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --render-table ]]; then
  shopt -s nullglob
  for arch in fc400x2 fc750x3 simple-cnn; do
    results=(results/fashion-mnist/*-"$arch".json)
    ((${#results[@]})) || continue
    "${WHVI:-build/whvi}" table "${results[@]}" --paper '' \
      --title "Fashion-MNIST, $arch (60,000 training / 10,000 test images; out of distribution: the 1,000 MNIST test images of mnist-mini)" \
      --out "results/fashion-mnist/TABLE-$arch.md"
  done
  exit 0
fi
exec bash scripts/sweep/grid.sh fashion_mnist configs/fashion-mnist '*' scripts/experiments/fashion_mnist.sh bash scripts/experiments/fashion_mnist.sh --render-table -- "$@"
