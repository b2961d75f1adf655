#!/usr/bin/env bash
# Checks scripts/reproduce.sh and the scripts the docs name, without running any experiment:
#  - every results folder that holds a README.md has a recipe, whose dry run lists commands
#    that name only scripts that exist;
#  - an unknown folder, a bad -j and a missing binary are refused with one line and exit 2;
#  - every script parses (bash -n; Python's ast.parse);
#  - every scripts/... path named in the README, docs/ and the results folders' READMEs exists.
#
#   tests/scripts/reproduce_test.sh REPO_ROOT
set -uo pipefail
cd "${1:?usage: reproduce_test.sh REPO_ROOT}" || exit 2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

while IFS= read -r readme; do
  d=${readme%/README.md}
  out=$(bash scripts/reproduce.sh --dry-run "$d" 2>&1) || { fail "reproduce.sh --dry-run $d: $out"; continue; }
  [[ -n $out ]] || fail "reproduce.sh --dry-run $d printed no command"
  while IFS= read -r path; do
    [[ -f $path ]] || fail "reproduce.sh --dry-run $d names $path, which does not exist"
  done < <(grep -o 'scripts/[A-Za-z0-9_./-]*\.\(sh\|py\|sbatch\)' <<<"$out" | sort -u)
done < <(find results -name README.md | sort)

listed=$(bash scripts/reproduce.sh --list | wc -l)
readmes=$(find results -name README.md | wc -l)
[[ $listed == "$readmes" ]] || fail "reproduce.sh --list gives $listed folders, results/ has $readmes READMEs"

expect_refusal() {  # expect_refusal WHAT COMMAND...
  local what=$1 out rc
  shift
  out=$("$@" 2>&1 >/dev/null)
  rc=$?
  [[ $rc == 2 ]] || fail "$what: exit $rc, expected 2"
  [[ $(wc -l <<<"$out") == 1 && $out == reproduce:* ]] || fail "$what: expected one 'reproduce:' line, got: $out"
}
expect_refusal "unknown folder" bash scripts/reproduce.sh --dry-run results/no-such-folder
expect_refusal "no folder" bash scripts/reproduce.sh
expect_refusal "bad -j" bash scripts/reproduce.sh -j 0 results/uci
expect_refusal "unknown option" bash scripts/reproduce.sh --frobnicate results/uci
expect_refusal "missing binary" env WHVI=/nonexistent/whvi bash scripts/reproduce.sh results/uci
expect_refusal "hostile label" env BENCH_LABEL='x;rm -rf y' bash scripts/reproduce.sh --dry-run results/bench

while IFS= read -r f; do
  case $f in
    *.py) python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$f" 2>/dev/null || fail "$f does not parse" ;;
    *) bash -n "$f" 2>/dev/null || fail "$f does not parse" ;;
  esac
done < <(find scripts -type f \( -name '*.sh' -o -name '*.py' -o -name '*.sbatch' \) | sort)

while IFS=: read -r file path; do
  [[ -f $path ]] || fail "$file names $path, which does not exist"
done < <(grep -o '\(tests/\)\?scripts/[A-Za-z0-9_./-]*\.\(sh\|py\|sbatch\)' -r README.md docs --include='*.md' -H;
         find results -name README.md -exec grep -H -o '\(tests/\)\?scripts/[A-Za-z0-9_./-]*\.\(sh\|py\|sbatch\)' {} + | sort -u)

if ((fails)); then
  echo "reproduce_test: $fails failure(s)" >&2
  exit 1
fi
echo "reproduce_test: ok ($readmes results folders)"
