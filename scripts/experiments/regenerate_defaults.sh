#!/usr/bin/env bash
# Retrains the WHVI and MCD experiments of committed results folders whose records
# ran at an initial noise variance other than the one their config resolves to now
# (WHVI's and MCD's default became log sigma^2 = 0: results/selection/README.md,
# "Wide re-selection"), then renders the folder's table again. Other models'
# records are left alone (a fresh clone has no checkpoints, so the folder's own
# experiment script would retrain every model).
#
#   scripts/experiments/regenerate_defaults.sh [--dry-run] [-j JOBS] [--whvi PATH] FOLDER...
#
# FOLDER: results/uci, results/uci-shallow or results/synthetic. --dry-run lists the
# stale records and the configs it would train. Other options go to
# scripts/sweep/sweep.sh. Resumable: records already at the current value are kept.
# Example: WHVI_DATA_DIR=../shared/data bash scripts/experiments/regenerate_defaults.sh -j 2 results/uci-shallow
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/sweep/lib.sh

DRY=
[[ ${1:-} == --dry-run ]] && { DRY=1; shift; }
opts=() folders=()
while (($#)); do
  case $1 in
    -j|--whvi|--threads-per-job|--set) opts+=("$1" "$2"); shift 2 ;;
    results/*) folders+=("${1%/}"); shift ;;
    *) opts+=("$1"); shift ;;
  esac
done
((${#folders[@]})) || { echo "regenerate_defaults: name a results folder (results/uci, results/uci-shallow, results/synthetic)" >&2; exit 2; }
WHVI=$(whvi_of "${opts[@]}")

for folder in "${folders[@]}"; do
  case $folder in
    results/uci) cfgdir=configs/uci ;;
    results/uci-shallow) cfgdir=configs/uci-shallow ;;
    results/synthetic) cfgdir=configs/synthetic ;;
    *) echo "regenerate_defaults: no rule for $folder" >&2; exit 2 ;;
  esac
  stale=()
  for cfg in "$cfgdir"/*-whvi.yaml "$cfgdir"/*-mcd.yaml; do
    name=$(basename "$cfg" .yaml)
    rec=$folder/$name.json
    want=$("$WHVI" config --dump "$cfg" | awk '/^likelihood:/{l=1; next} /^[a-z]/{l=0} l && /init_log_noise_var:/{print $2}')
    have=$([[ -f $rec ]] && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["likelihood"]["init_log_noise_var"])' "$rec" || echo none)
    if [[ $have == none ]] || ! python3 -c 'import sys; sys.exit(float(sys.argv[1]) != float(sys.argv[2]))' "$have" "$want"; then
      echo "regenerate_defaults: $rec ran at $have, $cfg now gives $want"
      stale+=("$cfg")
    fi
  done
  ((${#stale[@]})) || { echo "regenerate_defaults: $folder is current"; continue; }
  [[ -n $DRY ]] && continue
  for cfg in "${stale[@]}"; do
    name=$(basename "$cfg" .yaml)
    rm -rf "${folder:?}/$name" "$folder/$name.json"
  done
  SWEEP_LOG_DIR=${SWEEP_LOG_DIR:-out/logs-regenerate} bash scripts/sweep/sweep.sh --whvi "$WHVI" "${opts[@]}" "${stale[@]}" || exit $?
  shopt -s nullglob
  case $folder in
    results/uci) "$WHVI" table results/uci/*.json --paper results/paper/whvi-neurips2020-table3.json --out results/uci/TABLE.md ;;
    results/uci-shallow) WHVI=$WHVI bash scripts/experiments/uci_shallow.sh --render-table ;;
    results/synthetic) "$WHVI" table results/synthetic/*.json --paper '' --title "Synthetic problems with a known noise floor" \
      --out results/synthetic/TABLE.md ;;
  esac
done
