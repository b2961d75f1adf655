#!/usr/bin/env bash
# Regenerates a committed results folder: runs the commands that wrote it, in order.
#
#   scripts/reproduce.sh [--dry-run] [-j JOBS] RESULTS_FOLDER...
#   scripts/reproduce.sh --list
#
#   --dry-run   print the commands, run nothing
#   -j JOBS     runs at once in the sweeps (default 2, one thread each)
#   --list      the folders it knows, one per line
#
# RESULTS_FOLDER is a folder under results/ (results/uci, results/analysis/gp-rff, ...).
# Each recipe runs the protocol the committed records ran (their split counts included).
# The binary is $WHVI (default build/whvi); data come from data.dir / WHVI_DATA_DIR as
# for any run. The sweeps resume: a split whose record and checkpoint both exist (on
# the machine that trained it) is kept, not retrained; checkpoints are not committed,
# so on a fresh clone every split is trained again. The experiment records, tables and
# figures are written again (an experiment record then names this run's command and
# commit; each split record keeps its own). Split records (NAME/split-KK.json), the
# selection stages' generated configs and their reliability plots are written by the runs
# and not committed (git ignores them; each experiment record holds its splits). To
# recompute splits on the machine that trained them, delete their split records first.
# scripts/render/tables.sh renders every committed table again from the committed records
# alone and checks each is the same bytes. Measurements that do not
# resume (results/bench, results/analysis/fwht-vs-matmul, results/analysis/approximation)
# write new files named after $BENCH_LABEL (default cpu-<host>) beside the committed ones,
# which whvi never overwrites.
. "$(dirname "$0")/help.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "reproduce: $*" >&2; exit 2; }

export WHVI=${WHVI:-build/whvi}
JOBS=2
DRY=0
LIST=0
folders=()
while (($#)); do
  case $1 in
    --dry-run | -n) DRY=1; shift ;;
    -j | --jobs) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive number of jobs"; JOBS=$2; shift 2 ;;
    --list) LIST=1; shift ;;
    -h | --help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see scripts/reproduce.sh --help)" ;;
    *) folders+=("${1%/}"); shift ;;
  esac
done
BENCH_LABEL=${BENCH_LABEL:-cpu-$(hostname -s 2>/dev/null || echo host)}
[[ $BENCH_LABEL =~ ^[A-Za-z0-9._-]+$ ]] || die "BENCH_LABEL may hold letters, digits, '.', '_' and '-' only"

# The commands that write each folder, one per line. Every folder under results/ that
# holds a README.md has an entry (tests/scripts/reproduce_test.sh checks it).
recipe() {
  local j=$JOBS W
  W=$(printf %q "$WHVI")
  case $1 in
    results/uci) echo "bash scripts/experiments/uci.sh -j $j" ;;
    results/uci-fused) echo "bash scripts/experiments/uci_fused.sh -j $j" ;;
    results/uci-shallow)  # all 20 splits (protein 5); NNG's committed records cover its first splits only, which this completes
      local m
      for m in mcd mfg whvi ensemble laplace swag blr gp nng; do echo "bash scripts/experiments/uci_shallow.sh -j $j '*-$m'"; done
      ;;
    results/uci-width) echo "bash scripts/experiments/uci_width.sh -j $j --set data.splits=1" ;;
    results/uci-class)  # 8 splits at width 128, one at the other widths
      echo "bash scripts/experiments/uci_class.sh -j $j '*-w128'"
      local w
      for w in 64 256 512; do echo "bash scripts/experiments/uci_class.sh -j $j --set data.splits=1 '*-w$w'"; done
      ;;
    results/uci-student-t) echo "bash scripts/experiments/uci_student_t.sh -j $j" ;;
    results/synthetic) echo "bash scripts/experiments/synthetic.sh -j $j" ;;
    results/density) echo "bash scripts/experiments/density.sh -j $j" ;;
    results/external) echo "/usr/bin/python3 scripts/judge/external_tables.py --models default,whvi,mcd,laplace,swag --whvi $W" ;;
    results/external-uci-layout) echo "/usr/bin/python3 scripts/judge/external_tables.py --tables diabetes-uci,friedman-uci,hetero-uci --models default,whvi,mcd,mfg,nf-whvi,ensemble,laplace --whvi $W --results results/external-uci-layout --data-dir /tmp/whvi-ext-uci/data --out-dir /tmp/whvi-ext-uci/out" ;;
    results/toy)
      recipe results/toy/fig4
      local m
      for m in whvi mfg mcd; do
        echo "$W --threads 1 train --config configs/toy.yaml --resume --set output.dir=results/toy --set model.kind=$m --set output.name=toy-$m"
      done
      recipe results/toy/checks
      ;;
    results/toy/fig4) echo "JOBS=$j bash scripts/experiments/toy.sh results/toy/fig4" ;;
    results/toy/checks)
      local g
      for g in 2 4; do
        echo "$W --threads 1 train --config configs/toy.yaml --resume --set output.dir=results/toy/checks --set model.kind=whvi --set model.whvi.init_g_logvar=-$g --set output.name=toy-whvi-g-logvar-$g"
      done
      echo "$W --threads 1 train --config configs/toy.yaml --resume --set output.dir=results/toy/checks --set model.kind=ensemble --set ensemble.prior=true --set training.steps=5000 --set output.name=toy-ensemble-map"
      for g in laplace swag; do
        echo "$W --threads 1 train --config configs/toy.yaml --resume --set output.dir=results/toy/checks --set model.kind=$g --set training.steps=5000 --set output.name=toy-$g --set output.plot=false"
      done
      for g in gp blr; do
        echo "$W --threads 1 train --config configs/toy.yaml --resume --set output.dir=results/toy/checks --set model.kind=$g --set model.depth=0 --set output.name=toy-$g --set output.plot=false"
      done
      ;;
    results/cifar10-mini)
      echo "bash scripts/experiments/cifar10.sh -j $j"
      recipe results/cifar10-mini/fig7
      ;;
    results/cifar10-mini/fig7) echo "bash scripts/experiments/cifar10_fig7.sh -j $j" ;;
    results/mnist-mini) echo "bash scripts/experiments/mnist_mini.sh -j $j" ;;
    results/fashion-mnist)
      echo "bash scripts/experiments/fashion_mnist.sh -j $j"
      recipe results/fashion-mnist/vsd-selection
      ;;
    results/fashion-mnist/vsd-selection) echo "bash scripts/experiments/fashion_mnist_vsd.sh -j $j" ;;
    results/selection)
      local s
      echo "bash scripts/experiments/select_defaults.sh -j $j"
      for s in $(bash scripts/experiments/select_defaults.sh --stages); do
        [[ $s == 1 ]] || echo "bash scripts/experiments/select_defaults.sh --stage $s -j $j"
      done
      ;;
    results/analysis)
      local a
      for a in ablation approximation fwht-vs-matmul gp-rff fashion-whvi-gap noise-collapse tensor-train; do recipe "results/analysis/$a"; done
      ;;
    results/analysis/ablation) echo "bash scripts/experiments/ablation.sh -j $j" ;;
    results/analysis/approximation)
      echo "bash scripts/experiments/approximation.sh results/analysis/approximation/$BENCH_LABEL --steps 1000 --dims 4,8,16,32,64,128,256,512"
      ;;
    results/analysis/fwht-vs-matmul) echo "bash scripts/experiments/fwht_vs_matmul.sh --device cpu --whvi $W results/analysis/fwht-vs-matmul/$BENCH_LABEL" ;;
    results/analysis/gp-rff) echo "bash scripts/experiments/gp_rff.sh -j $j" ;;
    results/analysis/noise-collapse) echo "bash scripts/experiments/noise_collapse.sh -j $j" ;;
    results/analysis/fashion-whvi-gap) echo "bash scripts/experiments/fashion_whvi_gap.sh -j $j" ;;
    results/analysis/tensor-train) echo "bash scripts/experiments/tensor_train.sh -j $j" ;;
    results/bench)
      local b="results/bench/$BENCH_LABEL"
      echo "bash scripts/bench/vs_pytorch.sh $b-train-vs-pytorch-1thread 3 64,128,256"
      echo "$W --threads 1 bench train --kinds whvi,mfg,mcd --widths 64,128,256,512,1024 --json $b-train-1thread.json --csv $b-train-1thread.csv"
      echo "$W --threads 1 bench fwht --batch 1 --sizes 64,128,256,512,1024,2048,4096 --json $b-fwht-1thread-batch1.json"
      echo "bash scripts/bench/predict.sh $BENCH_LABEL-1thread"
      ;;
    results/bench/*-parallel-splits-*)
      echo "bash scripts/bench/parallel_splits.sh results/bench/$BENCH_LABEL-parallel-splits 3"
      echo "python3 scripts/bench/parallel_splits_summary.py results/bench/$BENCH_LABEL-parallel-splits"
      ;;
    results/bench/*-predict-csv-*)
      echo "bash scripts/bench/predict_csv.sh results/bench/$BENCH_LABEL-predict-csv 2 1 whvi,mcd,mfg,nf-whvi,nng,vsd,tt,swag,laplace,ensemble"
      ;;
    results/paper) echo "# nothing to run: the paper's tables, transcribed by hand (results/paper/README.md)" ;;
    *) return 1 ;;
  esac
}

known() {
  local d
  while IFS= read -r d; do
    d=${d%/README.md}
    recipe "$d" >/dev/null && echo "$d"
  done < <(find results -name README.md -not -path 'results/README.md' | sort)
}

if ((LIST)); then known; exit 0; fi
((${#folders[@]})) || die "name a results folder (scripts/reproduce.sh --list shows them)"

for f in "${folders[@]}"; do
  f=${f#./}
  recipe "$f" >/dev/null || die "no recipe for '$f': scripts/reproduce.sh --list shows the folders it knows"
done
if ((!DRY)); then
  [[ -x $WHVI ]] || die "no whvi binary at '$WHVI': build it (bash scripts/setup.sh) or set WHVI=path/to/whvi"
fi
for f in "${folders[@]}"; do
  f=${f#./}
  while IFS= read -r cmd; do
    if ((DRY)); then
      if [[ $cmd == \#* ]]; then echo "$cmd"; else echo "WHVI=$(printf %q "$WHVI") $cmd"; fi
    elif [[ $cmd != \#* ]]; then
      echo "reproduce: $cmd" >&2
      bash -c "$cmd" || die "'$cmd' failed (exit $?); run the same command again to resume"
    else
      echo "$cmd"
    fi
  done < <(recipe "$f")
done
