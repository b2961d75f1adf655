#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), then configures and builds
# whvi into $BUILD_DIR (default: build). Idempotent: a second run installs
# nothing and rebuilds only what changed.
#   BUILD_DIR=build  JOBS=$(nproc)  CMAKE_ARGS="..."  bash scripts/setup.sh
. "$(dirname "$0")/help.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make git pkg-config
  libtorch-dev libcli11-dev libyaml-cpp-dev libspdlog-dev nlohmann-json3-dev libgtest-dev zlib1g-dev
  # LibTorch's matmul runs ~60x faster on OpenBLAS than on the reference BLAS.
  libopenblas0-pthread
  # sweeps (scripts/sweep/sweep.sh) and plots
  parallel gnuplot-nox
  # the full Fashion-MNIST (data.dataset: fashion-mnist; /usr/share/datasets/fashion-mnist)
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
