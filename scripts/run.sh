#!/usr/bin/env bash
# Quick start: set up, build, then run the main job: the WHVI toy problem of
# the paper (§3.1, Fig. 4). It trains configs/toy.yaml and writes
#   out/toy-whvi/split-00-grid.csv  predictive mean, std and 75%/95% bands on a grid
#   out/toy-whvi/split-00-data.csv  the training data
#   out/toy-whvi/split-00.png       the plot (gnuplot)
#   out/toy-whvi.json               the run's record
# Extra arguments go to `whvi train` (e.g. --set model.kind=mfg).
. "$(dirname "$0")/help.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/whvi" --version
"$BUILD_DIR/whvi" train --config configs/toy.yaml "$@"
