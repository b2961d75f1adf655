#!/usr/bin/env bash
# Renders every committed table of results/ again from the committed records alone, with
# the commands that wrote them, and checks that each comes out the same bytes as committed.
#
#   scripts/render/tables.sh [--whvi PATH] [--rev REV] [--keep] [--write] [--list]
#
#   --rev REV    the commit whose files it renders from and compares with (default HEAD)
#   --whvi PATH  the binary `whvi table` and `whvi select` run (default $WHVI, else build/whvi)
#   --keep       keep the copy it rendered in (its path is printed)
#   --write      copy each table that came out different into the working tree (to commit a
#                table an older whvi rendered, as the current one renders it from the records)
#   --list       print the tables it renders, one per line, and exit
#
# It works in a copy of a commit (`git archive REV`: the files a clone has; no
# split records, generated selection configs or selection plots, which git ignores), deletes
# each table there, runs the render commands below and compares every table with the
# committed one. The working tree is not touched (but by --write). Exit 0 when every table is
# the same bytes (or differs only in the binary's name its Rendered-by line gives, see
# below), 1 when one differs or is not written again.
#
# Not rendered here: the tables of results/bench and results/external*, written by the
# measurement that produced their numbers from files that are not committed (scripts/bench/*,
# scripts/judge/external_tables.py); scripts/reproduce.sh reruns those measurements.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
die() { echo "render/tables: $*" >&2; exit 2; }

WHVI=${WHVI:-build/whvi}
KEEP=0
WRITE=0
LIST=0
REV=HEAD
while (($#)); do
  case $1 in
    --whvi) (($# >= 2)) || die "--whvi needs a path"; WHVI=$2; shift 2 ;;
    --rev) (($# >= 2)) || die "--rev needs a commit"; REV=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --write) WRITE=1; shift ;;
    --list) LIST=1; shift ;;
    *) die "unknown argument '$1' (see scripts/render/tables.sh --help)" ;;
  esac
done

# the tables: every committed .md under results/ but the READMEs, results/paper, results/bench
# and results/external*; the rankings `whvi select` writes beside its SUMMARY.md; and the
# numbers of VSD's objective figure (objective.csv)
tables() {
  git ls-tree -r --name-only "$REV" results | grep -E '\.md$|/summary\.json$|^results/fashion-mnist/vsd-selection/objective\.csv$' |
    grep -v -E '(^|/)README\.md$' |
    grep -v -E '^results/(paper|bench|external[^/]*)/' || true
}
if ((LIST)); then tables; exit 0; fi

[[ -x $WHVI ]] || die "no whvi binary at '$WHVI': build it (bash scripts/setup.sh) or pass --whvi"
WHVI=$(cd "$(dirname "$WHVI")" && pwd)/$(basename "$WHVI")
export WHVI
command -v gnuplot >/dev/null 2>&1 || die "gnuplot is not installed (the render scripts draw figures too): run scripts/setup.sh"

repo=$PWD
export REPO=$repo
work=$(mktemp -d "${TMPDIR:-/tmp}/whvi-tables.XXXXXX")
((KEEP)) || trap 'rm -rf "$work"' EXIT
git rev-parse --verify -q "$REV^{commit}" >/dev/null || die "'$REV' is not a commit"
git archive "$REV" | tar -x -C "$work"
# `whvi table` and `whvi select` end a table with "Rendered by: `COMMAND`", COMMAND starting
# with the binary as it was called (build/whvi, build-s10/whvi, ...: a build folder of the
# machine). The renders here call the binary by the name the committed table's line gives
# (its --out file's), so a table that re-renders is the same bytes, that line included. A
# name that was an absolute path cannot be given again (whvi writes "whvi" for one): such a
# table is reported as the same but for the binary's name.
export REAL_WHVI=$WHVI REV
WHVI=$work/.whvi-as-rendered
cat >"$WHVI" <<'SH'
#!/usr/bin/env bash
out= prev= sel=0
for a in "$@"; do [[ $prev == --out ]] && out=$a; [[ $a == select ]] && sel=1; prev=$a; done
name=whvi
if [[ -n $out ]]; then
  ((sel)) && out=$out/SUMMARY.md
  n=$(git -C "$REPO" show "$REV:$out" 2>/dev/null | awk '/^Rendered by: `/ { sub(/^Rendered by: `/, ""); print $1; exit }')
  [[ -n $n && $n != /* ]] && name=$n
fi
exec -a "$name" "$REAL_WHVI" "$@"
SH
chmod +x "$WHVI"
mapfile -t list < <(tables)
(cd "$work" && rm -f "${list[@]}")

# the written-by line of a criterion: `python3 scripts/render/...` (stdout is the file)
written_by() {  # (awk reads all its input: no early exit for pipefail to see)
  git show "$REV:$1" | awk '!f && match($0, /Written by `python3 scripts\/render\/[^`]*`/) {
    print substr($0, RSTART + 12, RLENGTH - 13); f = 1 } END { exit !f }'
}

cmds=()
cmds+=("\"\$WHVI\" table results/uci/*.json --paper results/paper/whvi-neurips2020-table3.json --out results/uci/TABLE.md")
cmds+=("\"\$WHVI\" table results/uci-fused/*.json --paper results/paper/whvi-neurips2020-table3.json --out results/uci-fused/TABLE.md")
# ENGINES.md compares against results/uci's records as they were at commit 27c277a, before
# its WHVI and MCD cells were retrained at a new default (results/uci-fused/README.md): the
# command runs in a folder whose results/uci holds those records (from git's history)
cmds+=("rm -rf .engines && mkdir -p .engines/results && git -C \"\$REPO\" archive 27c277a results/uci | tar -x -C .engines --exclude='*/split-*' && cp -r scripts .engines/ && cp -r results/uci-fused .engines/results/ && (cd .engines && python3 scripts/render/compare_engines.py results/uci results/uci-fused results/uci-fused/ENGINES.md) && cp .engines/results/uci-fused/ENGINES.md results/uci-fused/ENGINES.md && rm -rf .engines")
cmds+=("\"\$WHVI\" table results/synthetic/*.json --paper '' --title 'Synthetic problems with a known noise floor' --out results/synthetic/TABLE.md")
cmds+=("\"\$WHVI\" table results/uci-student-t/*.json --paper results/paper/whvi-neurips2020-table3.json --title \"WHVI with the Student's t likelihood, split 0 (Table 3's protocol)\" --out results/uci-student-t/TABLE.md")
cmds+=("\"\$WHVI\" table results/density/*.json --paper '' --title 'Beyond the Gaussian: a mixture density per input' --out results/density/TABLE.md")
cmds+=("\"\$WHVI\" table results/density/gaussian/*.json --paper '' --title 'Beyond the Gaussian: one Gaussian per input' --out results/density/gaussian/TABLE.md")
cmds+=("bash scripts/experiments/uci_shallow.sh --render-table")
cmds+=("bash scripts/experiments/uci_width.sh --render-only")
cmds+=("bash scripts/experiments/uci_class.sh --render-only")
cmds+=("bash scripts/experiments/cifar10.sh --render-table")
cmds+=("bash scripts/experiments/cifar10_fig7.sh --render")
cmds+=("bash scripts/experiments/mnist_mini.sh --render-table")
cmds+=("bash scripts/experiments/fashion_mnist.sh --render-table")
for a in ablation gp_rff noise_collapse tensor_train fashion_whvi_gap; do
  cmds+=("bash scripts/experiments/$a.sh --render-only")
done
# VSD's selection on Fashion-MNIST (scripts/experiments/fashion_mnist_vsd.sh): the ranking, then
# the table of the chosen candidate beside MCD and MFG
vsd=results/fashion-mnist/vsd-selection
cmds+=("\"\$WHVI\" select \$(awk '!/^[[:space:]]*#/ && NF {print \"$vsd/fashion-mnist-vsd-\" \$1 \".json\"}' configs/selection/candidates-vsd-fashion.txt) --out $vsd")
cmds+=("chosen=\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"vsd\"][\"chosen\"])' $vsd/summary.json) && \"\$WHVI\" table results/fashion-mnist/fashion-mnist-mcd-fc400x2.json results/fashion-mnist/fashion-mnist-mfg-fc400x2.json results/fashion-mnist/fashion-mnist-vsd-fc400x2-selected.json --paper '' --title \"Fashion-MNIST, fc400x2: VSD with the objective chosen on validation rows (\$chosen), beside MCD and MFG\" --out results/fashion-mnist/TABLE-vsd-selected.md")
# the figure of VSD's objective over training (its CSV is checked; the PNG is gnuplot's)
labels="paper hier warmup10k tempered0.1 tempered0.03 tempered0.01 tempered0.1-p0.01"
cmds+=("bash scripts/render/objective.sh $vsd/objective.png $(for l in $labels; do printf '%s ' "$vsd/fashion-mnist-vsd-$l.json:$l"; done)")
# the selection stages (scripts/experiments/select_defaults.sh): `whvi select` over a stage's
# records (not summary.json, nor the records of auto's candidates) writes SUMMARY.md and
# summary.json; each criterion names the command that wrote it
for s in $(git ls-tree -r --name-only "$REV" results/selection | grep '/SUMMARY\.md$'); do
  d=${s%/SUMMARY.md}
  cmds+=("runs=(); for f in $d/*.json; do b=\$(basename \"\$f\" .json); [[ \$b == summary || ( \$b == *-auto-* && -f $d/\${b%-auto-*}.json ) ]] || runs+=(\"\$f\"); done; \"\$WHVI\" select \"\${runs[@]}\" --out $d")
done
for t in $(git ls-tree -r --name-only "$REV" results/selection | grep -E '/(CRITERION[^/]*|CHOSEN)\.md$'); do
  c=$(written_by "$t") || die "$t names no 'Written by \`python3 scripts/render/...\`' command"
  cmds+=("$c > $t")
done

rc=0
for c in "${cmds[@]}"; do
  (cd "$work" && bash -c "set -euo pipefail; $c" >"$work/.render.log" 2>&1) || {
    echo "render/tables: FAILED: $c" >&2
    sed 's/^/  /' "$work/.render.log" >&2
    rc=1
  }
done
same=0 named=0
binary_name() { sed -E 's/^(Rendered by: `)[^ `]*/\1whvi/'; }  # the binary's name in that line
for t in "${list[@]}"; do
  if [[ ! -f $work/$t ]]; then
    echo "render/tables: NOT WRITTEN $t" >&2
    rc=1
  elif git show "$REV:$t" | cmp -s - "$work/$t"; then
    same=$((same + 1))
  elif cmp -s <(git show "$REV:$t" | binary_name) <(binary_name <"$work/$t"); then
    echo "render/tables: the same but for the binary's name in its Rendered-by line: $t"
    named=$((named + 1))
  else
    echo "render/tables: DIFFERS $t" >&2
    { git show "$REV:$t" | diff - "$work/$t" | head -20 | sed 's/^/  /' >&2; } || true
    if ((WRITE)); then cp "$work/$t" "$repo/$t" && echo "render/tables: wrote $t" >&2; fi
    rc=1
  fi
done
echo "render/tables: $same of ${#list[@]} tables the same bytes as committed, $named the same but for the binary's name (at $(git rev-parse --short "$REV"))"
((KEEP)) && echo "render/tables: rendered in $work"
exit "$rc"
