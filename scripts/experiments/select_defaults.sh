#!/usr/bin/env bash
# The default-selection experiment (docs/modelling.md "How the defaults were chosen"):
# every candidate of configs/selection/candidates.txt, for its model, on the 8
# UCI data sets, under configs/selection/protocol.yaml (metrics on validation
# rows carved from each training split; the test rows are never read). Then
# `whvi select` ranks the candidates by validation MNLL and writes
# results/selection/SUMMARY.md and summary.json.
#
#   scripts/experiments/select_defaults.sh [--stage 2|sghmc|ensemble|stopping|wide|stopping-rule|laplace-prior|stopping-noise] [--configs-only] [-j JOBS] [--whvi PATH]   (other options go to scripts/sweep/sweep.sh)
#   --configs-only writes the stage's generated configs (results/selection/configs*/) and stops.
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
case $STAGE in
  1) PROTOCOL=configs/selection/protocol.yaml CANDIDATES=configs/selection/candidates.txt OUT=results/selection/runs ;;
  2) PROTOCOL=configs/selection/protocol-full.yaml CANDIDATES=configs/selection/candidates-stage2.txt OUT=results/selection/stage2 ;;
  sghmc) PROTOCOL=configs/selection/protocol-sghmc.yaml CANDIDATES=configs/selection/candidates-sghmc.txt OUT=results/selection/sghmc ;;
  ensemble) PROTOCOL=configs/selection/protocol-ensemble.yaml CANDIDATES=configs/selection/candidates-ensemble.txt OUT=results/selection/ensemble ;;
  stopping) PROTOCOL=configs/selection/protocol-stopping.yaml CANDIDATES=configs/selection/candidates-stopping.txt OUT=results/selection/stopping ;;
  wide) PROTOCOL=configs/selection/protocol-wide.yaml CANDIDATES=configs/selection/candidates-wide.txt OUT=results/selection/wide ;;
  stopping-rule) PROTOCOL=configs/selection/protocol-stopping-rule.yaml CANDIDATES=configs/selection/candidates-stopping-rule.txt OUT=results/selection/stopping-rule ;;
  laplace-prior) PROTOCOL=configs/selection/protocol-laplace-prior.yaml CANDIDATES=configs/selection/candidates-laplace-prior.txt OUT=results/selection/laplace-prior ;;
  stopping-noise) PROTOCOL=configs/selection/protocol-stopping-noise.yaml CANDIDATES=configs/selection/candidates-stopping-noise.txt OUT=results/selection/stopping-noise ;;
  *) echo "select_defaults: --stage must be 1, 2, sghmc, ensemble, stopping, wide, stopping-rule, laplace-prior or stopping-noise" >&2; exit 2 ;;
esac
source scripts/sweep/lib.sh
WHVI=$(whvi_of "$@")

# config folder / data set: the base of each generated config is configs/<folder>/<set>-<model>.yaml
DATASETS=(uci/boston uci/concrete uci/energy uci/kin8nm uci/naval uci/power uci/protein uci/yacht)
[[ $STAGE == stopping || $STAGE == wide || $STAGE == stopping-rule || $STAGE == laplace-prior || $STAGE == stopping-noise ]] && DATASETS+=(synthetic/friedman synthetic/gap synthetic/hetero synthetic/highdim synthetic/linear)
# stopping-rule measures two held-out sets every 50 steps: on kin8nm's 8,192 rows that took
# 12 minutes a run against 45 s of training, so it keeps the sets under 2,000 rows
[[ $STAGE == stopping-rule ]] && DATASETS=(uci/boston uci/concrete uci/energy uci/yacht "${DATASETS[@]:8}")
# laplace-prior: the CSV examples as the base (their schedule, as a user's table gets it)
[[ $STAGE == laplace-prior ]] && DATASETS+=(uci-class/eeg uci-class/magic uci-class/letter)
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
    d=${folder_set#*/}
    cfg=$GEN/$d-$model-$name.yaml
    {
      echo "# generated by scripts/experiments/select_defaults.sh from $PROTOCOL and $CANDIDATES"
      if [[ $STAGE == laplace-prior || $STAGE == stopping-noise ]]; then
        kind=regression; [[ $folder_set == uci-class/* ]] && kind=classification
        echo "base: ../../../configs/examples/csv-$kind.yaml"
        dataset=$d; [[ $folder_set == synthetic/* ]] && dataset=synthetic:$d
        echo "data.dataset: $dataset"
        echo "data.target: \"\""
        echo "model.kind: $model"
        echo "output.name: $d-$model-$name"
      else
        echo "base: ../../../configs/$folder_set-$model.yaml"
      fi
      echo "$protocol"
      for kv in $sets; do echo "${kv%%=*}: ${kv#*=}"; done
      # every stage ran at the likelihood's initial noise variance of -1.5 unless a
      # candidate names it (WHVI's and MCD's default became 0 from the wide stage on),
      # and the ensemble stage without the members' prior (the UCI ensemble configs
      # took it after that stage); test Fingerprint.SelectionConfigsStillGiveTheirRecords
      # The stages before stopping-rule ran with stopping's measurement every
      # 500 steps and a patience of 10, its defaults then; stopping-rule runs at
      # today's defaults, as does laplace-prior.
      if [[ $STAGE != stopping-rule && $STAGE != laplace-prior && $STAGE != stopping-noise ]]; then
        pin likelihood.init_log_noise_var -1.5
        pin training.stopping_every 500
        pin training.stopping_patience 10
      fi
      if [[ $STAGE == ensemble ]]; then pin ensemble.prior false; fi
      # laplace-prior ran before its winner became laplace's default prior variance
      if [[ $STAGE == laplace-prior ]]; then pin model.sghmc.prior_var 0; fi
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
for f in "$OUT"/*.json; do [[ $(basename "$f") == summary.json ]] || runs+=("$f"); done
if [[ $STAGE == stopping-rule ]]; then  # one run per model: the rules are replayed on its curves
  ((${#runs[@]})) && python3 scripts/render/stopping_rule.py "$OUT" > "$OUT/CRITERION.md.tmp" && mv "$OUT/CRITERION.md.tmp" "$OUT/CRITERION.md"
  exit "$rc"
fi
((${#runs[@]})) && "$WHVI" select "${runs[@]}" --out "$OUT"
if [[ $STAGE == wide || $STAGE == ensemble || $STAGE == laplace-prior || $STAGE == stopping-noise ]] && ((${#runs[@]})); then
  python3 scripts/render/wide_criterion.py "$OUT" "$CANDIDATES" > "$OUT/CRITERION.md.tmp" && mv "$OUT/CRITERION.md.tmp" "$OUT/CRITERION.md"
fi
exit "$rc"
