#!/usr/bin/env bash
# Quick start: set up, build, then run the main job. Until training lands
# (issue 3) the main job is the FWHT benchmark on a small grid; its table is
# printed and its JSON written to out/bench-fwht-cpu.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/whvi" --version
"$BUILD_DIR/whvi" bench fwht --sizes 64,256,1024,4096 --batch 512 --max-seconds 1 \
  --json out/bench-fwht-cpu.json "$@"
