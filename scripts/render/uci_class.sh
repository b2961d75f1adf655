#!/usr/bin/env bash
# Renders what exists of results/uci-class/ into TABLE.md: one section per
# width (the paper's Table 13: test error, test MNLL; plus ECE and Brier),
# each beside the paper's values for that width (results/paper/
# whvi-neurips2020-table13-w<NF>.json).
# TABLE.md opens with the cells of CONFIG_DIR (default configs/uci-class) that
# have no result in RESULTS_DIR yet.
#   scripts/render/uci_class.sh [RESULTS_DIR]     (default results/uci-class)
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-results/uci-class}
CONFIG_DIR=${CONFIG_DIR:-configs/uci-class}
WHVI=${WHVI:-build/whvi}
. scripts/render/widths.sh
widths_prelude uci_class "$DIR"
{
  echo "# UCI classification (the paper's Table 13)"
  echo
  echo "Two hidden layers of NF units, softmax likelihood, stratified random 90/10 splits"
  echo "(configs/uci-class/base.yaml). DRIVE, MINIBOO and MOCAP are in the paper's table but not"
  echo "available here (shared/data/PROVENANCE.md §5): no rows for them. The paper's MFG rows and"
  echo "some others are not transcribed (results/paper/whvi-neurips2020-table13-w*.json, notes)."
  echo "A reliability diagram of every result is beside its JSON (<name>-reliability.png)."
  echo
  bash scripts/render/list_missing.sh "$CONFIG_DIR" "$DIR" scripts/experiments/uci_class.sh
  echo
  width_sections "$DIR" results/paper/whvi-neurips2020-table13-w " (scripts/experiments/uci_class.sh '*-w{w}')"
} >"$DIR/TABLE.md.tmp" && mv "$DIR/TABLE.md.tmp" "$DIR/TABLE.md"
echo "render/uci_class: wrote $DIR/TABLE.md"
