#!/usr/bin/env bash
# whvi export --format onnx, checked by real clients: ONNX's checker
# (python3-onnx) passes every exported graph, and ONNX Runtime
# (onnxruntime-node, installed by scripts/test.sh into tests/export/node_modules)
# reproduces `whvi predict` on the same rows: within the Monte Carlo bound for
# the sampled models (two calls drawing different samples), to float32
# rounding for the closed form; kinds that do not export are refused with a
# one-line reason and write nothing.
#   bash tests/export/onnx_export_test.sh WHVI REPO
# Exit 77 (skipped, with the reason) where python3-onnx or onnxruntime-node is missing.
set -uo pipefail
WHVI=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
REPO=$(cd "$2" && pwd)
HERE=$REPO/tests/export
# Debian's python3-onnx is for Debian's python3, which may not be the first python3 on PATH
PY=python3
"$PY" -c 'import onnx' 2>/dev/null || PY=/usr/bin/python3
"$PY" -c 'import onnx' 2>/dev/null || { echo "skipped: python3-onnx is not installed (apt-get install python3-onnx)"; exit 77; }
command -v node >/dev/null && [[ -d $HERE/node_modules/onnxruntime-node ]] ||
  { echo "skipped: node or onnxruntime-node missing (scripts/test.sh installs them)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/whvi-export.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
S=8000
fails=0

"$WHVI" data export synthetic:friedman --rows 300 --out f.csv --log-level warn || exit 1
head -51 f.csv > rows.csv
python3 - <<'PY' || exit 1
import random
random.seed(3)
with open("k.csv", "w") as f:
    f.write("a,b,label\n")
    for i in range(300):
        a, b = random.gauss(0, 1), random.gauss(0, 1)
        f.write(f"{a:.4f},{b:.4f},{'yes' if a + 0.5 * b + random.gauss(0, 0.7) > 0 else 'no'}\n")
PY
head -51 k.csv > krows.csv

# case NAME DATA ROWS MODE SETTINGS...: train one split, predict ROWS, export, check (CASE_S: samples)
case_() {
  local name=$1 data=$2 rows=$3 mode=$4 S=${CASE_S:-$S}
  shift 4
  printf 'data:\n  dataset: %s\n  splits: 1\noutput:\n  dir: out\n  checkpoints: true\n' "$data" > "$name.yaml"
  "$WHVI" train --config "$name.yaml" --log-level warn --set training.steps=400 --set model.width=16 "$@" ||
    { echo "FAIL $name: training"; return 1; }
  local ck=out/$name/split-00.ckpt
  "$WHVI" predict --checkpoint "$ck" --input "$rows" --out "$name.csv" --mc-samples $S --log-level warn ||
    { echo "FAIL $name: predict"; return 1; }
  "$WHVI" export --checkpoint "$ck" --out "$name.onnx" --mc-samples $S --log-level warn ||
    { echo "FAIL $name: export"; return 1; }
  local cols
  cols=$("$PY" "$HERE/onnx_check.py" "$name.onnx") || { echo "FAIL $name: the ONNX checker"; return 1; }
  node "$HERE/ort_compare.js" "$name.onnx" "$rows" "$name.csv" "$cols" $S $S "$mode" ||
    { echo "FAIL $name: ONNX Runtime against whvi predict"; return 1; }
  echo "ok $name"
}

case_ mcd f.csv rows.csv sampled --set model.kind=mcd --set model.depth=2 || fails=$((fails + 1))
case_ mfg f.csv rows.csv sampled --set model.kind=mfg --set model.depth=1 || fails=$((fails + 1))
case_ whvi f.csv rows.csv sampled --set model.kind=whvi --set model.depth=1 || fails=$((fails + 1))
case_ whvi_shared f.csv rows.csv sampled --set model.kind=whvi --set model.depth=1 --set model.whvi.shared_g=true \
  --set model.whvi.bias=bayesian || fails=$((fails + 1))
# D = 1024: the FWHT as Kronecker factors (32 x 32), not one matrix product
CASE_S=400 case_ whvi_wide f.csv rows.csv sampled --set model.kind=whvi --set model.depth=1 --set model.width=1000 ||
  fails=$((fails + 1))
case_ blr f.csv rows.csv exact --set model.kind=blr --set model.depth=0 || fails=$((fails + 1))
case_ mcd_class k.csv krows.csv sampled --set data.target=label --set likelihood.kind=softmax --set model.kind=mcd --set model.depth=1 ||
  fails=$((fails + 1))
case_ whvi_temp k.csv krows.csv sampled --set data.target=label --set likelihood.kind=softmax --set model.kind=whvi --set model.depth=1 \
  --set calibration.kind=temperature || fails=$((fails + 1))

case_ gp f.csv rows.csv exact --set model.kind=gp || fails=$((fails + 1))
case_ gp_matern f.csv rows.csv exact --set model.kind=gp --set model.gp.kernel=matern52 || fails=$((fails + 1))
# last-layer Laplace (θ drawn per call); a deep ensemble of deterministic members (nothing drawn)
case_ laplace f.csv rows.csv sampled --set model.kind=laplace --set model.depth=1 || fails=$((fails + 1))
case_ laplace_class k.csv krows.csv sampled --set data.target=label --set likelihood.kind=softmax \
  --set model.kind=laplace --set model.depth=1 || fails=$((fails + 1))
case_ ensemble f.csv rows.csv exact --set model.kind=ensemble --set model.depth=1 --set ensemble.members=3 ||
  fails=$((fails + 1))
case_ ensemble_class k.csv krows.csv exact --set data.target=label --set likelihood.kind=softmax \
  --set model.kind=ensemble --set model.depth=1 --set ensemble.members=3 || fails=$((fails + 1))
# the target's log (a positive target: friedman's, shifted) and conformal calibration
awk -F, 'NR == 1 { print; next } { $NF = $NF + 30; print }' OFS=, f.csv > pos.csv
head -51 pos.csv > posrows.csv
case_ blr_log pos.csv posrows.csv exact --set model.kind=blr --set model.depth=0 --set data.target_transform=log ||
  fails=$((fails + 1))
case_ mcd_log pos.csv posrows.csv sampled --set model.kind=mcd --set model.depth=1 --set data.target_transform=log ||
  fails=$((fails + 1))
case_ mcd_conformal f.csv rows.csv sampled --set model.kind=mcd --set model.depth=1 --set calibration.kind=conformal ||
  fails=$((fails + 1))
# conformalized quantile regression: the model's own interval at calibration.level, moved by Q
case_ mcd_cqr f.csv rows.csv sampled --set model.kind=mcd --set model.depth=1 --set calibration.kind=cqr ||
  fails=$((fails + 1))
case_ mfg_class_conformal k.csv krows.csv sampled --set data.target=label --set likelihood.kind=softmax \
  --set model.kind=mfg --set model.depth=1 --set calibration.kind=conformal || fails=$((fails + 1))

# a kind that does not export: a one-line reason, no file
printf 'data:\n  dataset: f.csv\n  splits: 1\noutput:\n  dir: out\n  checkpoints: true\n' > sghmc.yaml
"$WHVI" train --config sghmc.yaml --log-level warn --set model.kind=sghmc --set model.depth=1 --set model.width=8 \
  --set training.steps=50 || { echo "FAIL sghmc: training"; fails=$((fails + 1)); }
if "$WHVI" export --checkpoint out/sghmc/split-00.ckpt --out s.onnx 2> err.txt; then
  echo "FAIL sghmc: exported"; fails=$((fails + 1))
elif [[ -e s.onnx ]] || ! grep -q "does not export" err.txt || (($(wc -l < err.txt) != 1)); then
  echo "FAIL sghmc: the refusal"; cat err.txt; fails=$((fails + 1))
else
  echo "ok sghmc refused: $(cat err.txt)"
fi
((fails == 0)) && echo "onnx export: all cases pass" || { echo "onnx export: $fails case(s) failed"; exit 1; }
