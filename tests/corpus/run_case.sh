#!/usr/bin/env bash
# Runs one hostile-input case of tests/corpus/ (see README.md there):
#   run_case.sh CASE_DIR WHVI_BINARY REPO_ROOT
# The case's `cmd` runs with bash in a fresh empty folder; its exit status and
# output (stdout and stderr together) are checked against `expect`. A case
# fails when the status differs, an expected text is missing or a forbidden one
# present, the process died by a signal, or it ran past its time limit (60 s,
# or the number in a `timeout` file). Prints the output on failure.
set -u
case_dir=$(cd "$1" && pwd) || { echo "no case folder $1"; exit 2; }
WHVI=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
REPO=$(cd "$3" && pwd)
[[ -x $WHVI ]] || { echo "whvi binary $WHVI not found"; exit 2; }
[[ -f $case_dir/cmd && -f $case_dir/expect ]] || { echo "$case_dir needs cmd and expect"; exit 2; }
limit=60
[[ -f $case_dir/timeout ]] && limit=$(cat "$case_dir/timeout")
work=$(mktemp -d "${TMPDIR:-/tmp}/whvi-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
export WHVI REPO CASE=$case_dir
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$REPO/../shared/data}
# Makes a training run take well under a second.
export TINY="--set training.steps=20 --set training.steps_fixed_noise=5 --set data.splits=1 --set evaluation.mc_samples=4 --set output.checkpoints=false"
out=$(cd "$work" && timeout -k 5 "$limit" bash "$case_dir/cmd" 2>&1 < /dev/null)
status=$?
want=$(head -n 1 "$case_dir/expect" | awk '$1 == "exit" { print $2 }')
fail=()
if ((status == 124 || status == 137)); then
  fail+=("timed out after ${limit} s")
elif ((status >= 128)); then
  fail+=("killed by signal $((status - 128))")
elif [[ $want == nonzero ]]; then
  ((status != 0)) || fail+=("exit status 0, expected non-zero")
elif [[ $want =~ ^[0-9]+$ ]]; then
  ((status == want)) || fail+=("exit status $status, expected $want")
else
  fail+=("first line of expect must be 'exit N' or 'exit nonzero'")
fi
while IFS= read -r line; do
  case $line in
    "contains: "*) t=${line#contains: }; grep -qF -- "$t" <<<"$out" || fail+=("missing text: $t") ;;
    "absent: "*) t=${line#absent: }; grep -qF -- "$t" <<<"$out" && fail+=("unexpected text: $t") ;;
    "" | "#"*) ;;
    *) fail+=("bad line in expect: $line") ;;
  esac
done < <(tail -n +2 "$case_dir/expect")
if ((${#fail[@]})); then
  printf 'FAIL %s\n' "${case_dir#"$REPO"/}"
  printf '  - %s\n' "${fail[@]}"
  printf -- '--- output ---\n%s\n' "$out"
  exit 1
fi
echo "ok ${case_dir#"$REPO"/}"
