#!/usr/bin/env bash
# Whole `whvi train` runs of one config, splits in parallel workers against the
# same splits one by one, side by side on this machine (rounds interleaved).
# Each run's record (written by whvi) holds its command, commit, machine,
# threads, per-split times and `wall_seconds`; this script only runs them.
#
#   scripts/bench/parallel_splits.sh OUT_DIR [ROUNDS] [CONFIG] [--set ...]...
#
# Default: configs/uci/yacht-whvi.yaml, 8 splits of 20,000 steps, 3 rounds of
#   A  whvi train                                   (default: splits in parallel, --threads = every core)
#   B  whvi --threads 1 train --parallel 1          (one after another, one thread)
#   C  whvi train --parallel 1                      (one after another, every core's threads)
# Summarise with: python3 scripts/bench/parallel_splits_summary.py OUT_DIR
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 1)) || { echo "usage: scripts/bench/parallel_splits.sh OUT_DIR [ROUNDS] [CONFIG] [--set ...]..." >&2; exit 2; }
OUT=$1; ROUNDS=${2:-3}; CONFIG=${3:-configs/uci/yacht-whvi.yaml}
shift $(( $# < 3 ? $# : 3 ))
WHVI=${WHVI:-$PWD/build/whvi}
SETS=(--set training.steps=20000 --set data.splits=8 "$@")
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  "$WHVI" train --config "$CONFIG" "${SETS[@]}" --set output.dir="$OUT" --set output.name="parallel-r$r" --log-level warn
  "$WHVI" --threads 1 train --config "$CONFIG" --parallel 1 "${SETS[@]}" --set output.dir="$OUT" --set output.name="onebyone-1thread-r$r" --log-level warn
  "$WHVI" train --config "$CONFIG" --parallel 1 "${SETS[@]}" --set output.dir="$OUT" --set output.name="onebyone-default-r$r" --log-level warn
done
rm -rf "$OUT"/*-r[0-9]*/  # the split folders (checkpoints); the records (*.json files) stay
