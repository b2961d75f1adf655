#!/usr/bin/env bash
# Set up, build, and run the whole test suite (ctest). Tests that need data
# read it from $WHVI_DATA_DIR (default: ../shared/data next to the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$(cd .. && pwd)/shared/data}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
