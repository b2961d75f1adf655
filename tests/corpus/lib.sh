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

# make_config FILE DATASET_PATH: a config that trains WHVI (named: a data folder's
# own default is auto) on a data folder,
# writing results under ./out.
make_config() {
  printf 'data:\n  dataset: %s\n  protocol: standard\nmodel:\n  kind: whvi\noutput:\n  dir: out\n' "$2" >"$1"
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
    printf 'data:\n  dataset: %s.csv\n  protocol: random\nmodel:\n  kind: whvi\noutput:\n  dir: out\n  checkpoints: true\n' "$1" >"$1.yaml" &&
    "$WHVI" train --config "$1.yaml" $TINY --set output.checkpoints=true --log-level warn
}

# stop_parallel_run HOW: starts a parallel run (2 splits in 2 worker processes,
# training that would take hours) in a session and process group of its own,
# waits until both workers train, then stops it HOW: `group-INT` sends SIGINT
# to the whole process group, as Ctrl-C in a terminal does; INT, TERM, HUP or
# KILL send that signal to the parent alone. Then checks that no process of
# the run is left one second later, and that no file under out/ appears,
# changes or goes in the next two seconds. With a second argument `rerun`, then
# trains a short run into the same folder and checks that its files stay as it
# wrote them. Prints "STOPPED WHOLE" when all hold.
stop_parallel_run() {
  local how=$1 p pg i n left
  "$WHVI" data export synthetic:friedman --rows 400 --out s.csv --log-level warn || return 9
  printf 'data:\n  dataset: s.csv\n  protocol: random\n  splits: 2\noutput:\n  dir: out\n  checkpoints: true\nmodel:\n  kind: whvi\ntraining:\n  steps: 100000000\n  stopping: off\n  log_every: 100000000\n' >s.yaml
  # SIGINT at its default, as in a terminal's job (a non-interactive shell's
  # background job would start with it ignored)
  setsid env --default-signal=INT "$WHVI" --threads 2 train --config s.yaml --parallel 2 >run.log 2>&1 &
  p=$!
  n=0
  for ((i = 0; i < 600; i++)); do
    n=$(pgrep -c -P "$p")
    ((n >= 2)) && break
    sleep 0.05
  done
  if ((n < 2)); then
    echo "the workers did not start"
    cat run.log
    kill -9 -- -"$p" "$p" 2>/dev/null
    return 8
  fi
  pg=$(ps -o pgid= -p "$p" | tr -d ' ')
  sleep 1.5  # the workers have loaded their data and train
  case $how in
    group-INT) kill -INT -- -"$pg" ;;
    *) kill -"$how" "$p" ;;
  esac
  sleep 1
  # processes of the run still alive (a zombie has ended: it only waits for init to reap it)
  left=$(ps -o stat= -g "$pg" | grep -vc '^Z')
  wait "$p" 2>/dev/null
  if ((left > 0)); then
    echo "$left process(es) of the run left a second after the stop:"
    ps -o pid,ppid,pgid,args -g "$pg"
    kill -9 -- -"$pg" 2>/dev/null
    return 1
  fi
  find out -printf '%p %s %T@\n' 2>/dev/null | sort >before.txt
  sleep 2
  find out -printf '%p %s %T@\n' 2>/dev/null | sort >after.txt
  if ! diff before.txt after.txt; then
    echo "files under out/ changed after the stop"
    return 1
  fi
  grep -m1 -o 'stopped by SIG[A-Z]*' run.log
  if [[ ${2:-} == rerun ]]; then  # a later run into the same folder keeps its own files
    "$WHVI" --threads 2 train --config s.yaml $TINY --set data.splits=2 --set output.checkpoints=true \
      --set training.stopping=auto --parallel 2 --log-level warn || return 7
    find out -printf '%p %s %T@\n' | sort >before.txt
    sleep 2
    find out -printf '%p %s %T@\n' | sort >after.txt
    diff before.txt after.txt || { echo "the later run's files changed after it finished"; return 1; }
  fi
  echo "STOPPED WHOLE"
}
