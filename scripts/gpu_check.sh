#!/usr/bin/env bash
# Builds whvi with CUDA against the LibTorch of the Python `torch` package on a
# GPU machine, runs the whole test suite (the CUDA kernel tests included) and
# the CUDA FWHT benchmark. For machines with no package registry: the Debian
# libraries come as .deb files in $DEBS (made beforehand on a machine with
# internet by:  mkdir -p .debs && cd .debs && apt-get download libyaml-cpp-dev
# libyaml-cpp0.7 libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev
# nlohmann-json3-dev libgtest-dev libgmock-dev googletest) and are unpacked
# into a private prefix, never into /. That prefix's include folder goes first
# on the search path: LibTorch 2.x ships its own (newer) fmt headers, which
# Debian's spdlog 1.10 (built against fmt 9) does not compile with.
#   DEBS=.debs OUT_DIR=out/gpu JOBS=16 bash scripts/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEBS=${DEBS:-.debs}
OUT_DIR=${OUT_DIR:-${OUT:-out/gpu}}
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build-cuda}
PREFIX=${PREFIX:-/tmp/whvi-deps}
mkdir -p "$OUT_DIR" "$PREFIX"
log() { echo "gpu_check: $*" | tee -a "$OUT_DIR/summary.txt"; }

if compgen -G "$DEBS/*.deb" >/dev/null; then
  for f in "$DEBS"/*.deb; do dpkg -x "$f" "$PREFIX"; done
fi
export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT_DIR/gpu.txt" 2>&1
log "GPU: $(cat "$OUT_DIR/gpu.txt")"
TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
log "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.compiled_with_cxx11_abi())')"
log "nvcc: $(nvcc --version | tail -1)"

start=$(date +%s)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWHVI_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
  -DCMAKE_PREFIX_PATH="$PREFIX/usr;$TORCH_PREFIX" \
  -DWHVI_INCLUDE_FIRST="$PREFIX/usr/include" > "$OUT_DIR/configure.log" 2>&1 \
  || { log "configure FAILED"; tail -40 "$OUT_DIR/configure.log"; exit 1; }
grep -E "whvi |Torch|CUDA" "$OUT_DIR/configure.log" | tee -a "$OUT_DIR/summary.txt"
cmake --build "$BUILD" -j "$JOBS" > "$OUT_DIR/build.log" 2>&1 \
  || { log "build FAILED"; grep -E "error|Error" "$OUT_DIR/build.log" | head -40; exit 1; }
log "build: $(( $(date +%s) - start )) s"

export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$PWD/data}  # carry data/ (ignored) holding uci/ etc.
(cd "$BUILD" && ctest --output-on-failure -j 8 --timeout 900) > "$OUT_DIR/ctest.log" 2>&1
log "ctest: $(grep -E 'tests passed|tests failed' "$OUT_DIR/ctest.log")"
grep -E "^\s+[0-9]+ - |Failed|\*\*\*" "$OUT_DIR/ctest.log" | head -20 | tee -a "$OUT_DIR/summary.txt"
"$BUILD/tests/test_cuda_kernels" > "$OUT_DIR/cuda_kernels.log" 2>&1
log "cuda kernel tests: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT_DIR/cuda_kernels.log" | tr '\n' ' ')"

"$BUILD/whvi" --version > "$OUT_DIR/version.txt" 2>&1
for dt in float32 float16 bfloat16; do
  "$BUILD/whvi" bench fwht --device cuda --dtype "$dt" --batch 512 \
    --sizes 64,128,256,512,1024,2048,4096,8192,16384,32768,65536 \
    --json "$OUT_DIR/bench-fwht-cuda-$dt.json" > "$OUT_DIR/bench-$dt.txt" 2>&1 \
    || log "bench $dt FAILED: $(tail -3 "$OUT_DIR/bench-$dt.txt")"
done
tail -20 "$OUT_DIR/bench-float32.txt"
cat "$OUT_DIR/summary.txt"
