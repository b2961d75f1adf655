#!/usr/bin/env bash
# Learning curves (evaluation.every) of several experiments side by side: the
# mean over splits of two metrics against training steps, one line per
# experiment, as one PNG with two panels (the paper's Figs. 2, 3 and 7).
#
#   scripts/render/curves.sh OUT.png TITLE METRIC_LEFT METRIC_RIGHT EXPERIMENT.json...
#
# METRIC_*: a key of the curve points (error, mnll, rmse, ece, ..., train_error
# with evaluation.curve_train_rows); the axes say which rows they score. Each
# line is labelled with the experiment's name. Needs python3 and gnuplot;
# without them it says so and writes nothing. Also writes OUT.csv (step,
# experiment, left, right) beside the PNG.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
(($# >= 5)) || { sed -n 2,12p "$0"; exit 2; }
out=$1 title=$2 left=$3 right=$4
shift 4
command -v python3 >/dev/null || { echo "render/curves: python3 missing, no figure" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$left" "$right" "$@" <<'PY'
import json, sys, os
tmp, left, right, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
names = []
rows = []
held = set()  # which rows the points score: a record with data.validation_fraction holds validation rows out
for i, f in enumerate(files):
    doc = json.load(open(f))
    held.add("validation" if (doc.get("config", {}).get("data", {}).get("validation_fraction") or 0) > 0 else "test")
    name = doc.get("experiment", os.path.basename(f)[:-5])
    acc = {}
    for s in doc.get("splits", []):
        for p in s.get("curve", []):
            a = acc.setdefault(p["step"], [0.0, 0.0, 0])
            if p.get(left) is None or p.get(right) is None:
                continue
            a[0] += p[left]; a[1] += p[right]; a[2] += 1
    if not acc:
        print(f"render/curves: {f} has no learning curve (evaluation.every: 0)", file=sys.stderr)
        continue
    with open(f"{tmp}/{len(names)}.dat", "w") as o:
        for step in sorted(acc):
            l, r, n = acc[step]
            if n:
                o.write(f"{step} {l / n} {r / n}\n")
                rows.append(f"{step},{name},{l / n},{r / n}")
    names.append(name)
with open(f"{tmp}/names", "w") as o:
    o.write("\n".join(names) + "\n")
with open(f"{tmp}/rows", "w") as o:  # axis labels: train_* keys score training rows
    rows_of = "held-out" if len(held) != 1 else held.pop()
    for m in (left, right):
        o.write((f"training {m[6:]}" if m.startswith("train_") else f"{rows_of} {m}") + "\n")
with open(f"{tmp}/all.csv", "w") as o:
    o.write("step,experiment," + left + "," + right + "\n" + "\n".join(rows) + "\n")
PY
cp "$tmp/all.csv" "${out%.png}.csv"
command -v gnuplot >/dev/null || { echo "render/curves: gnuplot missing, no figure (CSV written)" >&2; exit 0; }
mapfile -t names <"$tmp/names"
mapfile -t labels <"$tmp/rows"
plots() {  # $1: column
  local s="" i
  for i in "${!names[@]}"; do
    [[ -n $s ]] && s+=", "
    s+="'$tmp/$i.dat' using 1:$1 with lines lw 2 title '${names[$i]}'"
  done
  echo "$s"
}
gnuplot <<GP
set terminal pngcairo size 1100,420 enhanced font "sans,9"
set output '$out'
set multiplot layout 1,2 title "$title"
set xlabel 'training step'
set grid
set key top right noenhanced
set ylabel '${labels[0]}'
plot $(plots 2)
set ylabel '${labels[1]}'
plot $(plots 3)
unset multiplot
GP
echo "render/curves: wrote $out"
