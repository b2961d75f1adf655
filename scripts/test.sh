#!/usr/bin/env bash
# Set up, build, and run the whole test suite (ctest). Tests that need data
# read it from $WHVI_DATA_DIR (default: ../shared/data next to the checkout).
. "$(dirname "$0")/help.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Test-only packages, best effort: without them the test that needs them is
# skipped with its reason.
#   install_for WHAT PACKAGE...   (the Debian packages not installed yet)
install_for() {
  local what=$1 p missing=()
  shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  echo "test: installing ${missing[*]} (for $what)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } ||
    echo "test: could not install ${missing[*]}: $what will be skipped" >&2
}
# a private single-node Slurm for the array-script test (tests/slurm/slurm_array_test.sh)
install_for "the Slurm test" slurm-wlm munge
# The real clients of whvi export (tests/export/onnx_export_test.sh): ONNX's
# checker from Debian, ONNX Runtime from npm (--ignore-scripts: its install
# script only fetches optional GPU binaries; the CPU runtime ships in the package).
if command -v npm >/dev/null; then install_for "the ONNX export test" python3-onnx
else install_for "the ONNX export test" python3-onnx nodejs npm; fi
if command -v npm >/dev/null && [ ! -d tests/export/node_modules/onnxruntime-node ]; then
  (cd tests/export && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.30.0) ||
    echo "test: could not install onnxruntime-node: the ONNX export test will be skipped" >&2
fi
BUILD_DIR=${BUILD_DIR:-build}
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$(cd .. && pwd)/shared/data}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
