#!/usr/bin/env bash
# The default-selection experiment (docs/modelling.md "How the defaults were chosen"):
# every candidate of configs/selection/candidates.txt, for its model, on the 8
# UCI data sets, under configs/selection/protocol.yaml (metrics on validation
# rows carved from each training split; the test rows are never read). Then
# `whvi select` ranks the candidates by validation MNLL and writes
# results/selection/SUMMARY.md and summary.json.
#
#   scripts/experiments/select_defaults.sh [--stage 2|sghmc|ensemble|stopping|wide|stopping-rule|laplace-prior|stopping-noise|stopping-temperature|class-budget|class-stopping-fraction|reg-stopping-fraction|class-budget-large|reg-budget|stopping-every-epochs|reg-example-auto|class-example-auto|class-width|reg-auto-schedule|class-auto-schedule|reg-auto-eta|class-auto-eta|...] [--configs-only] [-j JOBS] [--whvi PATH]   (other options go to scripts/sweep/sweep.sh)
#   --configs-only writes the stage's generated configs (results/selection/configs*/) and stops.
#   select_defaults.sh --stages prints the stages of the table below, one a line.
#
# Stage 1 (default): configs/selection/protocol.yaml (2 splits, 10,500 steps) for
# every candidate; results in results/selection/runs/. Stage 2: the candidates
# listed in configs/selection/candidates-stage2.txt (the two best per model of
# stage 1) under configs/selection/protocol-full.yaml (the full 50,500 steps, 1
# split); results in results/selection/stage2/.
#
# Stage sghmc: the step h of preconditioned SGHMC (configs/selection/candidates-sghmc.txt)
# under configs/selection/protocol-sghmc.yaml (the full 50,500 steps, 1 split, 20%
# validation); results in results/selection/sghmc/.
#
# Stage ensemble: the deep ensembles' training length and MAP prior
# (configs/selection/candidates-ensemble.txt) under configs/selection/protocol-ensemble.yaml
# (1 split, 20% validation); results in results/selection/ensemble/.
#
# Stage wide: the defaults of MCD, MFG and WHVI against one step along each axis
# (configs/selection/candidates-wide.txt) under configs/selection/protocol-wide.yaml
# (1 split, 20% validation) on the 8 UCI sets and the 5 synthetic problems,
# ranked by validation MNLL and calibration error together
# (scripts/render/wide_criterion.py writes CRITERION.md); results in results/selection/wide/.
#
# Stage stopping: the fixed schedule against stopping on held-out rows
# (configs/selection/candidates-stopping.txt) under configs/selection/protocol-stopping.yaml
# (1 split, 20% validation) on the 8 UCI sets and the 5 synthetic problems;
# results in results/selection/stopping/.
#
# Stage stopping-rule: every model trains without stopping, its held-out
# stopping rows and its validation rows measured every 50 steps
# (configs/selection/protocol-stopping-rule.yaml), on the 4 UCI sets and the 5 synthetic
# problems under 2,000 rows; scripts/render/stopping_rule.py
# replays the candidate rules for stopping's interval and patience on those
# curves and writes CRITERION.md; results in results/selection/stopping-rule/.
#
# Stage laplace-prior: the prior of last-layer Laplace's MAP network
# (configs/selection/candidates-laplace-prior.txt) under
# configs/selection/protocol-laplace-prior.yaml: the CSV examples' schedule
# (configs/examples/) on the 8 UCI sets, the 5 synthetic problems and the 3 UCI
# classification sets, 1 split, 20% validation, ranked by validation MNLL and
# calibration error together (CRITERION.md); results in results/selection/laplace-prior/.
#
# Stage stopping-noise: the noise variance at the step validation stopping keeps
# (configs/selection/candidates-stopping-noise.txt) under
# configs/selection/protocol-stopping-noise.yaml: the CSV regression example's
# schedule on the 8 UCI sets and the 5 synthetic problems, 1 split, 20%
# validation, ranked by validation MNLL and calibration error together
# (CRITERION.md); results in results/selection/stopping-noise/.
#
# Stage stopping-temperature: the softmax predictive's temperature at the step
# validation stopping keeps (configs/selection/candidates-stopping-temperature.txt)
# under configs/selection/protocol-stopping-temperature.yaml: the CSV
# classification example's schedule on the 3 UCI classification sets and 10
# synthetic problems made classification, 1 split, 20% validation, ranked by
# validation MNLL and ECE together (CRITERION.md); results in
# results/selection/stopping-temperature/.
#
# Stage class-budget: the CSV classification example's step budget
# (configs/selection/candidates-class-budget.txt) under
# configs/selection/protocol-class-budget.yaml, on the data sets of stage
# stopping-temperature, ranked by validation MNLL and ECE together
# (CRITERION.md); results in results/selection/class-budget/.
#
# Stage class-stopping-fraction: the CSV classification example's share of
# stopping rows (configs/selection/candidates-class-stopping-fraction.txt) under
# configs/selection/protocol-class-stopping-fraction.yaml, on the same data sets,
# ranked the same way; results in results/selection/class-stopping-fraction/.
#
# Stage reg-stopping-fraction: the CSV regression example's share of stopping
# rows (configs/selection/candidates-reg-stopping-fraction.txt) under
# configs/selection/protocol-reg-stopping-fraction.yaml, on the 8 UCI sets and
# the 5 synthetic problems, ranked by validation MNLL and calibration error
# together; results in results/selection/reg-stopping-fraction/.
#
# Stage class-budget-large: the CSV classification example's step budget beyond
# 20,000 (configs/selection/candidates-class-budget-large.txt) under
# configs/selection/protocol-class-budget-large.yaml, on the data sets of stage
# class-budget, ranked the same way; results in results/selection/class-budget-large/.
#
# Stage reg-budget: the CSV regression example's step budget
# (configs/selection/candidates-reg-budget.txt) under
# configs/selection/protocol-reg-budget.yaml, on the 8 UCI sets and the 5
# synthetic problems, ranked by validation MNLL and calibration error together;
# results in results/selection/reg-budget/.
#
# Stage stopping-every-epochs: a cap, in epochs, on the CSV examples' interval
# between stopping measurements (configs/selection/candidates-stopping-every-epochs.txt)
# under configs/selection/protocol-stopping-every-epochs.yaml, on the 8 UCI sets,
# the 5 synthetic problems and the classification sets of stage class-budget,
# ranked by validation MNLL and calibration error together; results in
# results/selection/stopping-every-epochs/.
#
# Stages reg-example-auto and class-example-auto: a CSV example's own model
# against model.kind auto (configs/selection/candidates-<stage>.txt) under
# configs/selection/protocol-<stage>.yaml, on that task's sets of the stages
# above, the models ranked per set by validation MNLL and calibration error
# (scripts/render/model_criterion.py); results in results/selection/<stage>/.
#
# Stage class-width: the CSV classification example's width
# (configs/selection/candidates-class-width.txt) under
# configs/selection/protocol-class-width.yaml, on the sets of stage class-budget,
# ranked by validation MNLL and ECE together; results in results/selection/class-width/.
#
# Stages class-model-w128 and class-auto-w128 repeat class-example-auto's question at the
# classification example's width of 128; reg-auto-folds: model.kind auto's number of
# validation blocks on the regression example; gp-prior and gp-kernel: the exact GP's
# length-scale prior and covariance function on the sets within its size limit, ranked
# like the wide stage.
#
# Stages reg-auto-schedule and class-auto-schedule: model.kind auto's schedule
# (successive halving or every candidate's full budget) on a CSV example, ranked
# like the wide stage, with a margin for the cheaper (the protocol files).
#
# Stages reg-auto-eta and class-auto-eta: model.kind auto's race (from an eighth
# of the steps, the best half on, or from a quarter, the best third on) on a CSV
# example, ranked like the wide stage (the protocol files).
#
# Stage table6-select: every model of Table 6 (configs/uci-shallow/) on 3 splits of the 8
# UCI sets, 20% validation; per set the model of lowest validation MNLL is chosen and its
# Table 6 test MNLL read from results/uci-shallow/ (scripts/render/validation_choice.py
# writes CHOSEN.md); results in results/selection/table6-select/.
#
# The table STAGES below gives each stage's files, data sets, base configs,
# pinned defaults and judge: a new stage is one row there, its protocol and
# candidates files, and a paragraph here.
# Resumable: run the same command again after an interruption.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."

STAGE=1
if [[ ${1:-} == --stage ]]; then
  STAGE=${2:?--stage needs 1 or 2}
  shift 2
fi
CONFIGS_ONLY=
if [[ ${1:-} == --configs-only ]]; then CONFIGS_ONLY=1; shift; fi

# One row per stage: its protocol and candidates (configs/selection/), its
# results folder (results/selection/), its data sets, the configs its
# candidates start from, the defaults of its time it pins, and how its
# records are judged.
#   data:   uci (the 8 UCI regression sets), synthetic (the 5 synthetic
#           regression problems), small (the UCI sets under 2,000 rows),
#           class (the 3 UCI classification sets), synthetic-class (10
#           synthetic problems as classification: their target's quantile
#           bins, 2 classes for the first five, 3 for the rest, 600 rows),
#           table6 (the 8 UCI sets with the configs of configs/uci-shallow/)
#   base:   folder (configs/<folder>/<set>-<model>.yaml, the papers'
#           schedules) or examples (configs/examples/csv-<task>.yaml: the
#           schedule a user's table gets)
#   pins:   old (the likelihood's initial log noise variance -1.5 and
#           stopping's measurement every 500 steps with a patience of 10,
#           the defaults before the wide and stopping-rule stages), ensemble
#           (ensemble.prior false), laplace (model.sghmc.prior_var 0: before
#           its winner became laplace's default), temperature
#           (training.stopping_temperature keep: a stage that classified
#           before the stopping-temperature stage made fit the default),
#           budget5000 (training.steps 5000: a stage on the CSV examples that ran
#           before the class-budget stage gave the classification example
#           20,000 steps, or before the reg-budget stage gave the regression
#           example 20,000), budget20000 (training.steps 20000: a classification
#           stage that ran before the class-budget-large stage gave it 80,000),
#           width64 (model.width 64: a stage on the classification example that ran
#           before the class-width stage gave it 128), folds1 (model.auto.folds 1: a
#           stage on the regression example that ran before the reg-auto-folds stage
#           gave it 3), none
#   judge:  select (`whvi select`), wide (scripts/render/wide_criterion.py),
#           models (scripts/render/model_criterion.py: the models against each other),
#           curves (scripts/render/stopping_rule.py), choice
#           (scripts/render/validation_choice.py: per set the model of lowest validation
#           MNLL, and its test MNLL in the folder the configs came from)
# stage                protocol                      candidates                      out                   data                                 base      pins          judge
STAGES='
1                      protocol.yaml                 candidates.txt                  runs                  uci                                  folder    old           select
2                      protocol-full.yaml            candidates-stage2.txt           stage2                uci                                  folder    old           select
sghmc                  protocol-sghmc.yaml           candidates-sghmc.txt            sghmc                 uci                                  folder    old           select
ensemble               protocol-ensemble.yaml        candidates-ensemble.txt         ensemble              uci                                  folder    old,ensemble  wide
stopping               protocol-stopping.yaml        candidates-stopping.txt         stopping              uci,synthetic                        folder    old           select
wide                   protocol-wide.yaml            candidates-wide.txt             wide                  uci,synthetic                        folder    old           wide
stopping-rule          protocol-stopping-rule.yaml   candidates-stopping-rule.txt    stopping-rule         small,synthetic                      folder    none          curves
laplace-prior          protocol-laplace-prior.yaml   candidates-laplace-prior.txt    laplace-prior         uci,synthetic,class                  examples  laplace,temperature,budget5000,width64 wide
stopping-noise         protocol-stopping-noise.yaml  candidates-stopping-noise.txt   stopping-noise        uci,synthetic                        examples  budget5000          wide
stopping-temperature   protocol-stopping-temperature.yaml candidates-stopping-temperature.txt stopping-temperature class,synthetic-class      examples  budget5000,width64 wide
class-budget           protocol-class-budget.yaml    candidates-class-budget.txt     class-budget          class,synthetic-class                examples  width64       wide
class-stopping-fraction protocol-class-stopping-fraction.yaml candidates-class-stopping-fraction.txt class-stopping-fraction class,synthetic-class examples budget20000,width64 wide
reg-stopping-fraction  protocol-reg-stopping-fraction.yaml candidates-reg-stopping-fraction.txt reg-stopping-fraction uci,synthetic                examples  budget5000          wide
class-budget-large     protocol-class-budget-large.yaml candidates-class-budget-large.txt class-budget-large class,synthetic-class  examples  width64       wide
reg-budget             protocol-reg-budget.yaml      candidates-reg-budget.txt       reg-budget            uci,synthetic                        examples  none          wide
stopping-every-epochs  protocol-stopping-every-epochs.yaml candidates-stopping-every-epochs.txt stopping-every-epochs uci,synthetic,class,synthetic-class examples width64 wide
reg-example-auto       protocol-reg-example-auto.yaml candidates-reg-example-auto.txt reg-example-auto      uci,synthetic                        examples  folds1        models
class-example-auto     protocol-class-example-auto.yaml candidates-class-example-auto.txt class-example-auto class,synthetic-class            examples  width64       models
class-width            protocol-class-width.yaml     candidates-class-width.txt      class-width           class,synthetic-class                examples  none          wide
class-model-w128       protocol-class-model-w128.yaml candidates-class-model-w128.txt class-model-w128    class,synthetic-class                examples  none          models
class-auto-w128        protocol-class-auto-w128.yaml candidates-class-auto-w128.txt class-auto-w128      class,synthetic-class                examples  none          models
reg-auto-folds         protocol-reg-auto-folds.yaml  candidates-reg-auto-folds.txt   reg-auto-folds        uci,synthetic                        examples  none          wide
gp-prior               protocol-gp-prior.yaml        candidates-gp-prior.txt         gp-prior              small,synthetic                      examples  none          wide
gp-kernel              protocol-gp-kernel.yaml       candidates-gp-kernel.txt        gp-kernel             small,synthetic                      examples  none          wide
reg-auto-schedule      protocol-reg-auto-schedule.yaml candidates-reg-auto-schedule.txt reg-auto-schedule uci,synthetic                        examples  none          wide
class-auto-schedule    protocol-class-auto-schedule.yaml candidates-class-auto-schedule.txt class-auto-schedule class,synthetic-class        examples  none          wide
reg-auto-eta           protocol-reg-auto-eta.yaml    candidates-reg-auto-eta.txt     reg-auto-eta          uci,synthetic                        examples  none          wide
class-auto-eta         protocol-class-auto-eta.yaml  candidates-class-auto-eta.txt   class-auto-eta        class,synthetic-class                examples  none          wide
table6-select          protocol-table6-select.yaml   candidates-table6-select.txt    table6-select         table6                               folder    none          choice
'
if [[ ${1:-} == --stages ]]; then awk 'NF {print $1}' <<< "$STAGES"; exit 0; fi  # the table's stages, one a line
row=$(awk -v s="$STAGE" '$1 == s' <<< "$STAGES")
if [[ -z $row ]]; then
  echo "select_defaults: --stage must be one of: $(awk 'NF {printf "%s%s", sep, $1; sep=", "}' <<< "$STAGES")" >&2
  exit 2
fi
read -r _ protocol_file cand_file out_name DATA BASE PINS JUDGE <<< "$row"
PROTOCOL=configs/selection/$protocol_file CANDIDATES=configs/selection/$cand_file OUT=results/selection/$out_name
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")

# folder/set: the base of a folder stage's config is configs/<folder>/<set>-<model>.yaml
UCI=(uci/boston uci/concrete uci/energy uci/kin8nm uci/naval uci/power uci/protein uci/yacht)
# stopping-rule measures two held-out sets every 50 steps: on kin8nm's 8,192 rows that took
# 12 minutes a run against 45 s of training, so `small` keeps the sets under 2,000 rows
SMALL=(uci/boston uci/concrete uci/energy uci/yacht)
TABLE6=(uci-shallow/boston uci-shallow/concrete uci-shallow/energy uci-shallow/kin8nm uci-shallow/naval
        uci-shallow/power uci-shallow/protein uci-shallow/yacht)
SYNTHETIC=(synthetic/friedman synthetic/gap synthetic/hetero synthetic/highdim synthetic/linear)
CLASS=(uci-class/eeg uci-class/magic uci-class/letter)
SYNTHETIC_CLASS=(synthetic-class/friedman synthetic-class/gap synthetic-class/hetero synthetic-class/highdim
                 synthetic-class/linear synthetic-class/borehole synthetic-class/hartmann6 synthetic-class/rastrigin5
                 synthetic-class/robot synthetic-class/otlcircuit)
DATASETS=()
for part in ${DATA//,/ }; do
  case $part in
    uci) DATASETS+=("${UCI[@]}") ;;
    small) DATASETS+=("${SMALL[@]}") ;;
    table6) DATASETS+=("${TABLE6[@]}") ;;
    synthetic) DATASETS+=("${SYNTHETIC[@]}") ;;
    class) DATASETS+=("${CLASS[@]}") ;;
    synthetic-class) DATASETS+=("${SYNTHETIC_CLASS[@]}") ;;
  esac
done
GEN=results/selection/configs; [[ $STAGE == 1 ]] || GEN+=-stage$STAGE  # (a failing $(...) in an assignment stops a set -e script)
mkdir -p "$GEN"
protocol=$(grep -v '^\s*#' "$PROTOCOL" | sed '/^\s*$/d')
CONFIGS=()
pin() {  # KEY VALUE: written into a generated config unless its candidate ($sets) names KEY
  [[ " $sets" == *" $1="* ]] || echo "$1: $2"
}
while read -r model name sets; do
  [[ -z $model || $model == \#* ]] && continue
  for folder_set in "${DATASETS[@]}"; do
    # a folder stage runs a model only where the folder has its config (the GP: the sets within its size limit)
    [[ $BASE == folder && ! -f configs/$folder_set-$model.yaml ]] && continue
    d=${folder_set#*/}
    # a stage on both synthetic kinds names the classification problems <name>-class
    tag=$d; [[ $folder_set == synthetic-class/* && ,$DATA, == *,synthetic,* ]] && tag=$d-class
    cfg=$GEN/$tag-$model-$name.yaml
    {
      echo "# generated by scripts/experiments/select_defaults.sh from $PROTOCOL and $CANDIDATES"
      if [[ $BASE == examples ]]; then
        kind=regression; [[ $folder_set == uci-class/* || $folder_set == synthetic-class/* ]] && kind=classification
        echo "base: ../../../configs/examples/csv-$kind.yaml"
        dataset=$d; [[ $folder_set == synthetic*/* ]] && dataset=synthetic:$d
        echo "data.dataset: $dataset"
        echo "data.target: \"\""
        if [[ $folder_set == synthetic-class/* ]]; then
          classes=3
          for two in "${SYNTHETIC_CLASS[@]:0:5}"; do [[ $folder_set == "$two" ]] && classes=2; done
          echo "data.synthetic_classes: $classes"
          echo "data.synthetic_rows: 600"
        fi
        echo "model.kind: $model"
        echo "output.name: $tag-$model-$name"
      else
        echo "base: ../../../configs/$folder_set-$model.yaml"
      fi
      echo "$protocol"
      for kv in $sets; do echo "${kv%%=*}: ${kv#*=}"; done
      # every stage before stopping-rule ran at the likelihood's initial noise variance of
      # -1.5 unless a candidate names it (WHVI's and MCD's default became 0 from the wide
      # stage on), with stopping's measurement every 500 steps and a patience of 10, its
      # defaults then, and the ensemble stage without the members' prior (the UCI ensemble
      # configs took it after that stage); test Fingerprint.SelectionConfigsStillGiveTheirRecords
      if [[ ,$PINS, == *,old,* ]]; then
        pin likelihood.init_log_noise_var -1.5
        pin training.stopping_every 500
        pin training.stopping_patience 10
      fi
      if [[ ,$PINS, == *,ensemble,* ]]; then pin ensemble.prior false; fi
      if [[ ,$PINS, == *,laplace,* ]]; then pin model.sghmc.prior_var 0; fi
      if [[ ,$PINS, == *,temperature,* ]]; then pin training.stopping_temperature keep; fi
      if [[ ,$PINS, == *,budget5000,* ]]; then pin training.steps 5000; fi
      if [[ ,$PINS, == *,budget20000,* ]]; then pin training.steps 20000; fi
      if [[ ,$PINS, == *,width64,* ]]; then pin model.width 64; fi
      if [[ ,$PINS, == *,folds1,* ]]; then pin model.auto.folds 1; fi
    } > "$cfg.tmp"
    mv "$cfg.tmp" "$cfg"
    CONFIGS+=("$cfg")
  done
done < "$CANDIDATES"

[[ -n $CONFIGS_ONLY ]] && { echo "select_defaults: wrote ${#CONFIGS[@]} configs into $GEN"; exit 0; }
rc=0
bash scripts/sweep/sweep.sh --whvi "$WHVI" "$@" "${CONFIGS[@]}" || rc=$?
shopt -s nullglob
runs=()
for f in "$OUT"/*.json; do
  b=$(basename "$f" .json)
  # not summary.json, nor the record of one of auto's candidates (<run>-auto-<kind>[-fold<b>], beside <run>.json)
  [[ $b == summary || ( $b == *-auto-* && -f $OUT/${b%-auto-*}.json ) ]] || runs+=("$f")
done
if [[ $JUDGE == models ]]; then  # models against each other (auto's own candidates' records are not judged)
  models=$(awk '!/^[[:space:]]*#/ && NF {printf "%s%s", sep, $1; sep=","}' "$CANDIDATES")
  name=$(awk '!/^[[:space:]]*#/ && NF {print $2; exit}' "$CANDIDATES")
  for task in regression classification; do
    python3 scripts/render/model_criterion.py "$OUT" "$task" "$name" "$models" > "$OUT/CRITERION-$task.md.tmp" 2> /dev/null \
      && mv "$OUT/CRITERION-$task.md.tmp" "$OUT/CRITERION-$task.md" || rm -f "$OUT/CRITERION-$task.md.tmp"
  done
  exit "$rc"
fi
if [[ $JUDGE == choice ]]; then  # per set the model of lowest validation MNLL, and its test MNLL in its configs' folder
  folder=${DATASETS[0]%%/*}
  ((${#runs[@]})) && python3 scripts/render/validation_choice.py "$OUT" "$CANDIDATES" "results/$folder" > "$OUT/CHOSEN.md.tmp" \
    && mv "$OUT/CHOSEN.md.tmp" "$OUT/CHOSEN.md"
  exit "$rc"
fi
if [[ $JUDGE == curves ]]; then  # one run per model: the rules are replayed on its curves
  ((${#runs[@]})) && python3 scripts/render/stopping_rule.py "$OUT" > "$OUT/CRITERION.md.tmp" && mv "$OUT/CRITERION.md.tmp" "$OUT/CRITERION.md"
  exit "$rc"
fi
# `whvi select` names a record's model by the kind it trained, which for auto is the kind it chose: not for auto's candidates
auto_rows=$(awk '!/^[[:space:]]*#/ && $1 == "auto"' "$CANDIDATES")
((${#runs[@]})) && [[ -z $auto_rows ]] && "$WHVI" select "${runs[@]}" --out "$OUT"
if [[ $JUDGE == wide ]] && ((${#runs[@]})); then
  python3 scripts/render/wide_criterion.py "$OUT" "$CANDIDATES" > "$OUT/CRITERION.md.tmp" && mv "$OUT/CRITERION.md.tmp" "$OUT/CRITERION.md"
fi
exit "$rc"
