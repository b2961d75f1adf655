#!/usr/bin/env bash
# Every script in scripts/ answers -h and --help with its usage and exits 0,
# before it does anything else:
#  - each shell script sources scripts/help.sh as its first command, and -h
#    prints its header comment (checked statically first, so that a script
#    that would ignore -h is never run here);
#  - each Python script prints its docstring for -h (argparse or its own check).
#
#   tests/scripts/help_test.sh REPO_ROOT
set -uo pipefail
cd "${1:?usage: help_test.sh REPO_ROOT}" || exit 2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# the sourced helpers and the Slurm batch file (sbatch runs a copy, away from scripts/)
not_commands=(scripts/help.sh scripts/sweep/lib.sh scripts/render/widths.sh)
while IFS= read -r f; do
  [[ " ${not_commands[*]} " == *" $f "* ]] && continue
  [[ $f == scripts/hostile/cases/* ]] && continue  # the hostile corpus's cases: run by its run_cases.sh, not commands
  first=$(awk 'NR > 1 && !/^#/ { print; exit }' "$f")
  case $f in scripts/*/*) want='. "$(dirname "$0")/../help.sh"' ;; *) want='. "$(dirname "$0")/help.sh"' ;; esac
  if [[ $first != "$want" ]]; then
    fail "$f: its first command is '$first', not '$want'"
    continue
  fi
  header=$(awk 'NR == 2 { sub(/^# ?/, ""); print; exit }' "$f")
  for opt in -h --help; do
    out=$(timeout 20 bash "$f" "$opt" 2>&1)
    rc=$?
    [[ $rc == 0 ]] || fail "$f $opt: exit $rc"
    [[ $(head -n 1 <<<"$out") == "$header" ]] || fail "$f $opt does not print its header comment (got: $(head -n 1 <<<"$out"))"
  done
done < <(find scripts -name '*.sh' | sort)

torch_ok=0
python3 -c 'import torch' 2>/dev/null && torch_ok=1
while IFS= read -r f; do
  if grep -q '^import torch' "$f" && ((!torch_ok)); then continue; fi
  out=$(timeout 60 python3 "$f" -h 2>&1)
  rc=$?
  [[ $rc == 0 && -n $out ]] || fail "$f -h: exit $rc, output: $(head -n 1 <<<"$out")"
done < <(find scripts -name '*.py' | sort)

# the grid scripts pass -h on to scripts/sweep/grid.sh when it follows other options
out=$(timeout 20 bash scripts/experiments/uci_shallow.sh -j 1 -h 2>&1) || fail "uci_shallow.sh -j 1 -h: exit $?"
[[ $(head -n 1 <<<"$out") == "$(awk 'NR == 2 { sub(/^# ?/, ""); print; exit }' scripts/experiments/uci_shallow.sh)" ]] ||
  fail "uci_shallow.sh -j 1 -h does not print its header (got: $(head -n 1 <<<"$out"))"

((fails == 0)) && echo "help_test: every script answers -h" || exit 1
