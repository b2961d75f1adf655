#!/usr/bin/env bash
# The paper's Fig. 17: time of the FWHT against a dense matmul of the same shape,
# (left) against D at batch 512 and (right) against the batch size at D = 512,
# forward pass. Writes JSON + CSV of each `whvi bench fwht` run and one PNG.
#
#   scripts/experiments/fwht_vs_matmul.sh [--device cpu|cuda] [--threads N] [--whvi BIN] [OUT_DIR]
#
# OUT_DIR defaults to results/analysis/fwht-vs-matmul/<device>. Needs gnuplot.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
die() { echo "fwht_vs_matmul: $*" >&2; exit 2; }
DEVICE=cpu THREADS=1 WHVI=build/whvi OUT=""
while (($#)); do
  case $1 in
    --device) DEVICE=${2:?}; shift 2 ;;
    --threads) THREADS=${2:?}; shift 2 ;;
    --whvi) WHVI=${2:?}; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) OUT=$1; shift ;;
  esac
done
[[ $DEVICE == cpu || $DEVICE == cuda ]] || die "--device must be cpu or cuda"
[[ -x $WHVI ]] || die "'$WHVI' is not an executable whvi binary: build it (scripts/setup.sh) or pass --whvi"
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
OUT=${OUT:-results/analysis/fwht-vs-matmul/$DEVICE}
mkdir -p "$OUT"
SIZES=16,32,64,128,256,512,1024,2048,4096,8192
"$WHVI" --threads "$THREADS" bench fwht --device "$DEVICE" --no-backward --batch 512 --sizes "$SIZES" \
  --max-dense-d 8192 --max-seconds 1 --json "$OUT/vs-d.json" --csv "$OUT/vs-d.csv"
: > "$OUT/vs-batch.csv.tmp"
for b in 1 4 16 64 256 1024 4096; do
  "$WHVI" --threads "$THREADS" bench fwht --device "$DEVICE" --no-backward --batch "$b" --sizes 512 \
    --max-seconds 1 --json "$OUT/vs-batch-$b.json" --csv "$OUT/vs-batch-$b.csv"
  if [[ ! -s $OUT/vs-batch.csv.tmp ]]; then head -n 1 "$OUT/vs-batch-$b.csv" > "$OUT/vs-batch.csv.tmp"; fi
  tail -n +2 "$OUT/vs-batch-$b.csv" >> "$OUT/vs-batch.csv.tmp"
  rm "$OUT/vs-batch-$b.csv"
done
mv "$OUT/vs-batch.csv.tmp" "$OUT/vs-batch.csv"
term=png
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo && term=pngcairo
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs || true)
gnuplot <<GP
set terminal $term size 1100,450
set output "$OUT/fwht-vs-matmul.png"
set datafile separator ","
set multiplot layout 1,2 title "FWHT vs dense matmul, forward ($DEVICE, $THREADS thread(s), $cpu)"
set logscale xy
set key top left
set xlabel "D"; set ylabel "time per batch (ms)"
set title "batch 512"
plot "$OUT/vs-d.csv" every ::1 using 1:3 with linespoints title "FWHT", \
     "" every ::1 using 1:(\$4 > 0 ? \$4 : 1/0) with linespoints title "dense matmul"
set xlabel "batch size"
set title "D = 512"
plot "$OUT/vs-batch.csv" every ::1 using 2:3 with linespoints title "FWHT", \
     "" every ::1 using 2:4 with linespoints title "dense matmul"
unset multiplot
GP
echo "fwht_vs_matmul: wrote $OUT/fwht-vs-matmul.png"
