#!/usr/bin/env bash
# Side-by-side per-call cost of the CPU FWHT (C API, one in-cache row, 1 thread)
# for the kernels of two commits, built from the same harness
# (kernels/bench/percall.cpp) and run interleaved on this machine.
#   bash scripts/bench/percall_vs.sh OLD_REV [NEW_REV=HEAD] > results/bench/<name>.txt
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:?usage: bench_percall_vs.sh OLD_REV [NEW_REV]}
NEW=${2:-HEAD}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build() {  # rev dir
  mkdir -p "$2"
  git archive "$1" kernels | tar -x -C "$2"
  cp kernels/bench/percall.cpp "$2/percall.cpp"
  local k="$2/kernels" f="-O3 -fopenmp -std=c++17 -I$2/kernels -I$2/kernels/cpu"
  g++ $f -mavx2 -mfma -c "$k/cpu/fwht_avx2.cpp" -o "$2/avx2.o"
  g++ $f -mavx512f -mavx2 -mfma -c "$k/cpu/fwht_avx512.cpp" -o "$2/avx512.o"
  g++ $f "$2/percall.cpp" "$k/cpu/dispatch.cpp" "$k/cpu/fwht_scalar.cpp" "$2/avx2.o" "$2/avx512.o" -o "$2/percall"
}
build "$OLD" "$tmp/old"
build "$NEW" "$tmp/new"
echo "# per-call FWHT cost, kernels of $(git rev-parse --short=12 "$OLD") (old) vs $(git rev-parse --short=12 "$NEW") (new)"
echo "# harness kernels/bench/percall.cpp at $(git rev-parse --short=12 HEAD); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; command: bash scripts/bench/percall_vs.sh $*"
for round in 1 2; do
  echo "## round $round: old"; "$tmp/old/percall"
  echo "## round $round: new"; "$tmp/new/percall"
done
