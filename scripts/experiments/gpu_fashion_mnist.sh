#!/usr/bin/env bash
# Fashion-MNIST's variational runs on a lent GPU machine (training.device: cuda;
# the evaluation runs on the CPU): builds whvi with CUDA (scripts/gpu_check.sh
# BUILD_ONLY=1), then at once
#   - the configs named in CONFIGS (default: FC 750x3 MFG and VSD, WHVI's simple-cnn),
#     3 CPU threads each, into results/fashion-mnist/;
#   - scripts/experiments/fashion_mnist_vsd.sh (VSD's objective chosen on validation rows,
#     then the chosen one on the test images), 6 runs of 1 thread;
# and packs results/fashion-mnist (no checkpoints) into $OUT_DIR/results/fashion-mnist.tar.gz
# before DEADLINE (seconds since the epoch), stopping what has not finished.
# Check `whvi --version` in $OUT_DIR/summary.txt: a record is only committed when
# the build's commit is the one checked out here and its tree is clean.
#   DEBS=.debs WHVI_DATA_DIR=$PWD/out/gpu-data OUT_DIR=$OUT DEADLINE=$(( $(date +%s) + 570 )) bash scripts/experiments/gpu_fashion_mnist.sh
# WHVI_DATA_DIR must hold fashion-mnist/ (the four IDX files) and mnist-mini/.
. "$(dirname "$0")/../help.sh"
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR=${OUT_DIR:-${OUT:-out/gpu}}
DEADLINE=${DEADLINE:-$(( $(date +%s) + 3600 ))}
mkdir -p "$OUT_DIR/results"
BUILD_ONLY=1 TARGETS=whvi OUT_DIR="$OUT_DIR" bash scripts/gpu_check.sh || exit 1
WHVI=$PWD/${BUILD:-build-cuda}/whvi
export WHVI WHVI_DATA_DIR
"$WHVI" --version | tee -a "$OUT_DIR/summary.txt"
mkdir -p "$OUT_DIR/logs"
for c in ${CONFIGS:-mfg-fc750x3 vsd-fc750x3 whvi-simple-cnn}; do
  "$WHVI" --threads 3 train --config "configs/fashion-mnist/$c.yaml" --set training.device=cuda \
    --log-level info > "$OUT_DIR/logs/$c.txt" 2>&1 &
done
SWEEP_LOG_DIR="$OUT_DIR/logs" bash scripts/experiments/fashion_mnist_vsd.sh -j 6 --threads 1 --set training.device=cuda > "$OUT_DIR/logs/vsd-selection.txt" 2>&1 &
while (($(jobs -rp | wc -l))) && (($(date +%s) < DEADLINE - 25)); do sleep 5; done
for p in $(jobs -rp); do kill -- "$p" 2>/dev/null; pkill -P "$p" 2>/dev/null; done
pkill -f "$WHVI" 2>/dev/null
echo "gpu_fashion_mnist: stopped at $(date -u +%FT%TZ) with $(jobs -rp | wc -l) job(s) still running" >> "$OUT_DIR/summary.txt"
# one archive: a lent machine sends back a limited number of files, none deeply nested
tar -czf "$OUT_DIR/results/fashion-mnist.tar.gz" --exclude='*.ckpt' --exclude='*.lock' results/fashion-mnist
exit 0
