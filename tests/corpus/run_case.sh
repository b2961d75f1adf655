#!/usr/bin/env bash
# Runs one hostile-input case of tests/corpus/ (format: tests/corpus/README.md).
#   bash tests/corpus/run_case.sh CASE_DIR BINARY REPO
# Exit status: 0 pass, 1 fail (the output is printed), 77 skipped.
set -uo pipefail
if (($# != 3)); then
  echo "usage: run_case.sh CASE_DIR BINARY REPO" >&2
  exit 2
fi
CASE=$(cd "$1" && pwd) || exit 1
WHVI=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
REPO=$(cd "$3" && pwd) || exit 1
NAME=${CASE#"$REPO"/tests/corpus/}
[[ -f $CASE/cmd ]] || { echo "corpus $NAME: no cmd file" >&2; exit 1; }
[[ -f $CASE/expect ]] || { echo "corpus $NAME: no expect file" >&2; exit 1; }
[[ -x $WHVI ]] || { echo "corpus $NAME: binary '$WHVI' not found" >&2; exit 1; }

# Overrides that make a training run take well under a second.
TINY="--set training.steps=20 --set training.steps_fixed_noise=5 --set data.splits=1"
TINY+=" --set evaluation.mc_samples=4 --set output.checkpoints=false --set training.log_every=1000"
TINY+=" --set model.width=16 --set training.batch_size=16"
export WHVI CASE REPO TINY
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$REPO/../shared/data}
export CORPUS_LIB=$REPO/tests/corpus/lib.sh

timeout_s=60
[[ -f $CASE/timeout ]] && timeout_s=$(tr -d ' \n' <"$CASE/timeout")

work=$(mktemp -d "${TMPDIR:-/tmp}/whvi-corpus.XXXXXX") || exit 1
cleanup() { chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
out=$work.out
trap 'cleanup; rm -f "$out"' EXIT

# The snippet runs in an empty folder with the helpers of lib.sh loaded; its
# exit status is that of its last command.
(cd "$work" && timeout -k 5 "$timeout_s" bash -c 'source "$CORPUS_LIB" && source "$CASE/cmd"' \
  </dev/null >"$out" 2>&1)
rc=$?
output=$(cat "$out")

fail() {
  echo "corpus $NAME: FAIL: $*"
  echo "---- command ($CASE/cmd)"
  cat "$CASE/cmd"
  echo "---- output (exit status $rc)"
  printf '%s\n' "$output"
  echo "----"
  exit 1
}

if ((rc == 77)) && grep -q '^corpus: skip' <<<"$output"; then
  grep '^corpus: skip' <<<"$output"
  exit 77
fi
((rc == 124 || rc == 137)) && fail "timed out after ${timeout_s}s"

want=""
n_checks=0
while IFS= read -r line || [[ -n $line ]]; do
  line=${line%$'\r'}
  [[ -z $line || $line == \#* ]] && continue
  case $line in
    "exit "*)
      want=${line#exit }
      ;;
    "contains: "*)
      text=${line#contains: }
      [[ $output == *"$text"* ]] || fail "output lacks '$text'"
      n_checks=$((n_checks + 1))
      ;;
    "absent: "*)
      text=${line#absent: }
      [[ $output != *"$text"* ]] || fail "output contains '$text', which must be absent"
      n_checks=$((n_checks + 1))
      ;;
    *)
      fail "bad line in expect: '$line'"
      ;;
  esac
done <"$CASE/expect"
[[ -n $want ]] || fail "expect has no 'exit N' line"
((rc >= 128)) && fail "died by a signal (status $rc)"
if [[ $want == nonzero ]]; then
  ((rc != 0)) || fail "exit status 0, expected non-zero"
else
  ((rc == want)) || fail "exit status $rc, expected $want"
fi
echo "corpus $NAME: ok (exit $rc, $n_checks text checks)"
exit 0
