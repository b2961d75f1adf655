#!/usr/bin/env bash
# Draws the KL term and the data term of variational runs over training from
# the `objective` of each record's first split (step, loss, kl, kl_weight; data
# term = loss - kl_weight x kl, the expected negative log likelihood scaled to
# the training set), one line per record, log scale; and writes the numbers as CSV.
#
#   scripts/render/objective.sh OUT.png RECORD.json[:LABEL]...
#
# RECORD.json is an experiment record (output.dir/NAME.json: its `splits` array, split 0)
# or the record of one split (output.dir/NAME/split-KK.json), which holds the same entry.
# e.g. scripts/render/objective.sh results/fashion-mnist/vsd-selection/objective.png \
#        results/fashion-mnist/vsd-selection/fashion-mnist-vsd-paper.json:paper
# Needs python3 and gnuplot (scripts/setup.sh installs gnuplot-nox).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
die() {
  echo "render/objective: $*" >&2
  exit 2
}
(($# >= 2)) || die "usage: scripts/render/objective.sh OUT.png RECORD.json[:LABEL]..."
OUT=$1
shift
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed: run scripts/setup.sh"
CSV=${OUT%.png}.csv
python3 - "$CSV" "$@" <<'PY' || die "could not read the records' objective (see above)"
import json, sys
out, specs = sys.argv[1], sys.argv[2:]
rows = ["label,step,loss,kl,kl_weight,data"]
for spec in specs:
    path, _, label = spec.partition(":")
    r = json.load(open(path))
    if "splits" in r:  # an experiment record: its first split's entry
        r = (r["splits"] or [{}])[0]
    o = r.get("objective")
    if not o:
        sys.exit(f"{path} has no objective (a run of a method without a KL term, or an older record)")
    label = label or path
    for s, l, k, w in zip(o["step"], o["loss"], o["kl"], o["kl_weight"]):
        rows.append(f"{label},{s:.0f},{l:.9g},{k:.9g},{w:.9g},{l - w * k:.9g}")
open(out, "w").write("\n".join(rows) + "\n")
PY
labels=$(tail -n +2 "$CSV" | cut -d, -f1 | awk '!seen[$0]++')
plot_kl="" plot_data="" i=0
for l in $labels; do
  i=$((i + 1))
  plot_kl+="${plot_kl:+, }'$CSV' skip 1 using (strcol(1) eq '$l' ? \$2 : NaN):4 with lines lw 2 lc $i title '$l'"
  plot_data+="${plot_data:+, }'$CSV' skip 1 using (strcol(1) eq '$l' ? \$2 : NaN):6 with lines lw 2 lc $i title '$l'"
done
if gnuplot -e 'set terminal' 2>&1 | grep -q -w pngcairo; then
  TERMINAL='pngcairo size 640,640 enhanced font "sans,10"'
else
  TERMINAL='png size 640,640'
fi
gnuplot <<GP
set terminal $TERMINAL
set output '$OUT'
set datafile separator ','
set multiplot layout 2,1
set grid
set logscale y
set key top right noenhanced
set xlabel 'training step'
set ylabel 'KL term (nats)'
plot $plot_kl
set ylabel 'data term (nats)'
plot $plot_data
unset multiplot
GP
echo "render/objective: wrote $OUT and $CSV"
