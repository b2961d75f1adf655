#!/usr/bin/env bash
# Our CPU FWHT (the C API of kernels/) against FFHT (FALCONN-LIB/FFHT, the
# fastest public CPU FWHT), side by side on this machine, one thread, float32:
# one in-cache row per call and 512-row batches, D = 64 ... 65,536
# (kernels/bench/vs_ffht.cpp). FFHT is built from its
# source with its own Makefile's flags (-O3 -march=native); ours with the
# flags of kernels/CMakeLists.txt (each SIMD level in its own object, chosen
# at run time).
#
#   bash scripts/bench/vs_ffht.sh [FFHT_DIR] > results/bench/<name>.txt
#
# FFHT_DIR: a checkout of https://github.com/FALCONN-LIB/FFHT (default: cloned
# into a temp folder at the pinned commit below; needs git and internet); for a
# copy without .git, FFHT_VERSION=... names its commit in the output.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
FFHT_COMMIT=fba727a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if (($#)); then
  FFHT=$1
  [[ -f $FFHT/fht.c && -f $FFHT/fht.h ]] || { echo "bench/vs_ffht: '$FFHT' is not an FFHT checkout (no fht.c/fht.h)" >&2; exit 2; }
else
  git clone -q https://github.com/FALCONN-LIB/FFHT "$tmp/ffht"
  git -C "$tmp/ffht" checkout -q "$FFHT_COMMIT"
  FFHT=$tmp/ffht
fi
k=kernels
f="-O3 -fopenmp -std=c++17 -I$k -I$k/cpu"
gcc -O3 -march=native -std=c99 -c "$FFHT/fht.c" -o "$tmp/fht.o"
gcc -O3 -march=native -std=c99 -c "$FFHT/fast_copy.c" -o "$tmp/fast_copy.o"
g++ $f -mavx2 -mfma -c "$k/cpu/fwht_avx2.cpp" -o "$tmp/avx2.o"
g++ $f -mavx512f -mavx2 -mfma -c "$k/cpu/fwht_avx512.cpp" -o "$tmp/avx512.o"
g++ $f -I"$FFHT" "$k/bench/vs_ffht.cpp" "$k/cpu/dispatch.cpp" "$k/cpu/fwht_scalar.cpp" "$tmp/avx2.o" "$tmp/avx512.o" \
  "$tmp/fht.o" "$tmp/fast_copy.o" -o "$tmp/vs_ffht"
# FFHT's version: its own checkout's commit; for a copy that is not a git
# checkout (git would answer for an enclosing repository), FFHT_VERSION or "unversioned copy"
if [[ $(git -C "$FFHT" rev-parse --show-toplevel 2>/dev/null) == "$(cd "$FFHT" && pwd -P)" ]]; then
  ffht_version=$(git -C "$FFHT" rev-parse --short=12 HEAD)
else
  ffht_version=${FFHT_VERSION:-"unversioned copy in $1"}
fi
echo "# our CPU FWHT (kernels/ at $(git rev-parse --short=12 HEAD)$(git diff --quiet -- kernels || echo -dirty)) vs FFHT $ffht_version; $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, flags: $(grep -m1 -o -w -e avx512f -e avx2 /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# command: bash scripts/bench/vs_ffht.sh $*; ratio = ours / FFHT (< 1: ours faster); 1 thread"
OMP_NUM_THREADS=1 "$tmp/vs_ffht" "${ROUNDS:-9}"
