# Helpers for corpus cases (sourced before each case's cmd; see README.md).

# make_data DIR [ROWS]: a small regression data set in the UCI layout in DIR
# (3 features, target in column 3, deterministic values, one stored split:
# the first 80% of the rows train, the rest test). ROWS defaults to 20.
make_data() {
  local dir=$1 rows=${2:-20} i
  mkdir -p "$dir"
  : >"$dir/data.txt"
  for ((i = 0; i < rows; i++)); do
    printf '%d.%d %d.5 %d %d.25\n' $((i % 7)) $((i % 3)) $(((i * 5) % 11)) $((i * i % 13)) $((i % 4 + 3 * (i % 7))) >>"$dir/data.txt"
  done
  printf '0\n1\n2\n' >"$dir/index_features.txt"
  printf '3\n' >"$dir/index_target.txt"
  printf '1\n' >"$dir/n_splits.txt"
  local ntr=$((rows * 8 / 10))
  seq 0 $((ntr - 1)) >"$dir/index_train_0.txt"
  seq $ntr $((rows - 1)) >"$dir/index_test_0.txt"
}

# make_config FILE DATASET_PATH: a config that trains WHVI on a data folder,
# writing results under ./out.
make_config() {
  printf 'data:\n  dataset: %s\n  protocol: standard\noutput:\n  dir: out\n' "$2" >"$1"
}

# make_result FILE DATASET-MODEL: a minimal experiment record for `whvi table`.
make_result() {
  printf '{"experiment": "%s", "dataset": "%s", "model": "%s", "summary": {"rmse": {"mean": 1.5, "std": 0.1, "n": 2}}}\n' \
    "$2" "${2%%-*}" "${2##*-}" >"$1"
}

# skip_unless_root REASON: skips the case (exit 77) when not run as root.
skip_unless_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "corpus: skip: $1 needs root"
    exit 77
  fi
}

# train_csv NAME: exports synthetic:friedman (120 rows) as NAME.csv and trains a
# tiny WHVI on it with a checkpoint, results under ./out (NAME/split-00.ckpt).
train_csv() {
  "$WHVI" data export synthetic:friedman --rows 120 --out "$1.csv" --log-level warn &&
    printf 'data:\n  dataset: %s.csv\n  protocol: random\noutput:\n  dir: out\n  checkpoints: true\n' "$1" >"$1.yaml" &&
    "$WHVI" train --config "$1.yaml" $TINY --set output.checkpoints=true --log-level warn
}
