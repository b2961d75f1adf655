#!/usr/bin/env bash
# CIFAR-10 Bayesian CNNs (the paper's Table 4 and Fig. 7):
# configs/cifar10/<arch>-<model>.yaml (full data, the paper's schedule; needs
# scripts/data/fetch.sh cifar10 and realistically a GPU) and <...>-mini.yaml
# (the repository's 2,000/1,000-image subset, a CPU schedule), then
# results/cifar10{,-mini}/TABLE.md:
#
#   scripts/experiments/cifar10.sh [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# PATTERN globs config stems (default '*-mini'; '*' also runs the full-data
# configs). On a Slurm cluster with GPUs (training.device: cuda; NNG runs on the
# CPU only, so its configs go in a list of their own, submitted without WHVI_SET):
#   ls configs/cifar10/*[a-z].yaml | grep -v -e base -e mini -e nng > cifar.txt
#   WHVI_SET=training.device=cuda sbatch --gres=gpu:1 --array=0-$(( $(wc -l <cifar.txt) - 1 )) scripts/sweep/slurm.sbatch cifar.txt
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --render-table ]]; then
  shopt -s nullglob
  for dir in results/cifar10 results/cifar10-mini; do
    [[ -d $dir ]] || continue
    {
      echo "# CIFAR-10 Bayesian CNNs ($(basename "$dir"))"
      echo
      # vgg16-bn: the VGG16 variants with batch normalisation (their own section,
      # since `whvi table` keeps one result per data set and model)
      for arch in simple-cnn alexnet vgg16 vgg16-bn resnet18; do
        results=()
        for r in "$dir/${arch%-bn}"-*.json; do
          if [[ $arch == vgg16-bn ]]; then [[ $r == *-bn.json || $r == *-bn-mini.json ]] && results+=("$r")
          elif [[ $arch == vgg16 ]]; then [[ $r == *-bn.json || $r == *-bn-mini.json ]] || results+=("$r")
          else results+=("$r"); fi
        done
        ((${#results[@]})) || continue
        "${WHVI:-build/whvi}" table "${results[@]}" --paper '' --title "$arch" | sed 's/^# /## /; s/^## /### /; s/^### '"$arch"'/## '"$arch"'/'
        echo
      done
    } >"$dir/TABLE.md.tmp" && mv "$dir/TABLE.md.tmp" "$dir/TABLE.md"
    echo "cifar10: wrote $dir/TABLE.md"
  done
  exit 0
fi
exec bash scripts/sweep/grid.sh cifar10 configs/cifar10 '*-mini' scripts/experiments/cifar10.sh bash scripts/experiments/cifar10.sh --render-table -- "$@"
