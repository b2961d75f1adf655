#!/usr/bin/env bash
# One split of each CONFIG trained by two whvi binaries side by side (BEFORE,
# AFTER), ROUNDS interleaved rounds, one thread, the validation stopping off
# and STEPS steps; for a change that should only make training faster (e.g.
# subnormal floats flushed to zero), how much faster, and what it does to the
# numbers. Each binary's records name its commit, threads and SIMD level.
#
#   bash scripts/bench/two_binaries.sh OUT_DIR BEFORE AFTER STEPS ROUNDS CONFIG...   (all required; e.g. 3000 2)
#
# Writes OUT_DIR/SUMMARY.md (seconds per config and binary, the ratio, both
# RMSEs) and OUT_DIR/times.csv; data from WHVI_DATA_DIR as for `whvi train`.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 5)) || { echo "usage: scripts/bench/two_binaries.sh OUT_DIR BEFORE AFTER STEPS ROUNDS CONFIG..." >&2; exit 2; }
OUT=$1 BEFORE=$2 AFTER=$3 STEPS=$4 ROUNDS=$5
shift 5
[[ $STEPS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/two_binaries: STEPS and ROUNDS must be positive integers" >&2; exit 2; }
for b in "$BEFORE" "$AFTER"; do [[ -x $b ]] || { echo "bench/two_binaries: no whvi binary at '$b'" >&2; exit 2; }; done
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "config,binary,round,seconds,rmse,commit" >"$OUT/times.csv.tmp"
for r in $(seq 1 "$ROUNDS"); do
  for cfg in "$@"; do
    for which in before after; do
      bin=$BEFORE; [[ $which == after ]] && bin=$AFTER
      name=$(basename "$cfg" .yaml)-$which-$r
      "$bin" --threads 1 --log-level warn train --config "$cfg" --set data.splits=1 --set training.steps="$STEPS" \
        --set training.stopping=off --set output.dir="$work" --set output.name="$name" --set output.checkpoints=false
      python3 - "$work/$name.json" "$cfg" "$which" "$r" >>"$OUT/times.csv.tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["splits"][0]
print(f'{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{s["train_seconds"]:.3f},{s["rmse"]:.6g},{d.get("whvi_commit", "")}')
PY
    done
  done
done
mv "$OUT/times.csv.tmp" "$OUT/times.csv"
python3 - "$OUT/times.csv" "$STEPS" "$ROUNDS" >"$OUT/SUMMARY.md" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cpu = open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].split("\n")[0].strip()
print(f"# Two binaries side by side\n\nOne split, {sys.argv[2]} steps, one thread, {sys.argv[3]} interleaved round(s); "
      f"CPU: {cpu}. Written by `scripts/bench/two_binaries.sh` from `times.csv`.\n")
print("| config | before (commit) | after (commit) | before s | after s | before / after | RMSE before | RMSE after |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for cfg in dict.fromkeys(r["config"] for r in rows):
    b = [r for r in rows if r["config"] == cfg and r["binary"] == "before"]
    a = [r for r in rows if r["config"] == cfg and r["binary"] == "after"]
    tb = min(float(r["seconds"]) for r in b)
    ta = min(float(r["seconds"]) for r in a)
    print(f"| `{cfg}` | {b[0]['commit'][:7]} | {a[0]['commit'][:7]} | {tb:.2f} | {ta:.2f} | {tb / ta:.2f} | {b[0]['rmse']} | {a[0]['rmse']} |")
print("\nSeconds: the fastest round of each (the split record's `train_seconds`).")
PY
cat "$OUT/SUMMARY.md"
