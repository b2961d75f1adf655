#!/usr/bin/env bash
# Set up, build, and run the whole test suite (ctest). Tests that need data
# read it from $WHVI_DATA_DIR (default: ../shared/data next to the checkout).
. "$(dirname "$0")/help.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Test-only packages: a private single-node Slurm for the array-script test
# (tests/slurm/slurm_array_test.sh). Best effort: without them that test is
# skipped with its reason.
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  echo "test: installing ${missing[*]} (for the Slurm test)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } ||
    echo "test: could not install ${missing[*]}: the Slurm test will be skipped" >&2
fi
BUILD_DIR=${BUILD_DIR:-build}
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$(cd .. && pwd)/shared/data}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
