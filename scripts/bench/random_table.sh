#!/usr/bin/env bash
# Sourced by the prediction benchmarks (predict_csv.sh, export_vs_predict.sh):
# random_table ROWS SEED prints a CSV of 784 uniform inputs rounded to 3
# decimals (x1..x784) and a label (c1..c10: the largest of the first 10), seeded;
# fc750x3_bench DIR writes DIR/train.csv (2,000 rows), DIR/new.csv (10,000) and
# DIR/fc750x3.yaml (an FC 750x3 softmax classifier trained 50 steps, into DIR/runs).
. "$(dirname "$0")/../help.sh"
random_table() {
  awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); h = "x1"; for (j = 2; j <= 784; j++) h = h ",x" j; print h ",label"
    for (i = 0; i < n; i++) { best = -1; line = ""; for (j = 1; j <= 784; j++) { v = int(rand() * 1000) / 1000
      line = line (j > 1 ? "," : "") v; if (j <= 10 && v > best) { best = v; c = j } } print line ",c" c } }'
}
fc750x3_bench() {
  random_table 2000 1 >"$1/train.csv"
  random_table 10000 2 >"$1/new.csv"
  cat >"$1/fc750x3.yaml" <<YAML
data: {dataset: $1/train.csv, target: label, splits: 1}
likelihood: {kind: softmax}
model: {depth: 3, width: 750}
training: {steps_fixed_noise: 0, steps: 50, stopping: "off"}
output: {dir: $1/runs}
YAML
}
