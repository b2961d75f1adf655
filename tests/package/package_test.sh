#!/usr/bin/env bash
# The installed library from a program outside the project: `cmake --install`
# of the build into a fresh prefix, a consumer (tests/package) configured with
# find_package(whvi) against that prefix alone and built, and its
# whvi::Predictor's output compared with `whvi predict`'s bytes at one thread
# (a regression and a classification checkpoint; rows from a file and from memory).
#   bash tests/package/package_test.sh BUILD_DIR REPO
set -uo pipefail
BUILD=$(cd "$1" && pwd) || exit 1
REPO=$(cd "$2" && pwd) || exit 1
WHVI=$BUILD/whvi
work=$(mktemp -d "${TMPDIR:-/tmp}/whvi-package.XXXXXX") || exit 1
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
cd "$work" || exit 1
cmake --install "$BUILD" --prefix "$work/prefix" >install.log 2>&1 || { cat install.log; echo "FAIL: cmake --install"; exit 1; }
[[ -f prefix/include/whvi/predictor.h && -x prefix/bin/whvi ]] || { echo "FAIL: the install lacks the header or the binary"; exit 1; }
cmake -S "$REPO/tests/package" -B consumer-build -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
  >configure.log 2>&1 || { cat configure.log; echo "FAIL: find_package(whvi) from the installed prefix"; exit 1; }
cmake --build consumer-build -j 2 >build.log 2>&1 || { tail -40 build.log; echo "FAIL: building the consumer"; exit 1; }
"$WHVI" data export synthetic:friedman --rows 120 --out f.csv --log-level warn || exit 1
awk -F, 'NR == 1 { print; next } { printf "%s", $1; for (i = 2; i < NF; i++) printf ",%s", $i; print "," ($NF > 14 ? "high" : "low") }' \
  f.csv > k.csv
fails=0
for kind in mcd whvi; do
  for data in f.csv k.csv; do
    lik=gaussian
    [[ $data == k.csv ]] && lik=softmax
    name=$kind-${data%.csv}
    printf 'data:\n  dataset: %s\n  splits: 1\nlikelihood:\n  kind: %s\nmodel:\n  kind: %s\n  depth: 1\n  width: 16\ntraining:\n  steps: 100\noutput:\n  dir: out\n  name: %s\n  checkpoints: true\n' \
      "$data" "$lik" "$kind" "$name" > "$name.yaml"
    "$WHVI" --threads 1 train --config "$name.yaml" --log-level warn || { echo "FAIL $name: training"; fails=$((fails + 1)); continue; }
    ck=out/$name/split-00.ckpt
    "$WHVI" --threads 1 predict --checkpoint "$ck" --input "$data" --mc-samples 16 --out "$name.cli.csv" --log-level warn
    ./consumer-build/consumer "$ck" "$data" 16 > "$name.lib.csv" 2> "$name.err" ||
      { cat "$name.err"; echo "FAIL $name: the consumer"; fails=$((fails + 1)); continue; }
    if cmp -s "$name.cli.csv" "$name.lib.csv"; then echo "ok $name: whvi::Predictor gives whvi predict's bytes"
    else echo "FAIL $name: whvi::Predictor's output differs from whvi predict's"; fails=$((fails + 1)); fi
  done
done
((fails == 0)) && echo "package: all cases pass" || exit 1
