#!/usr/bin/env bash
# Prints the Markdown paragraph that opens a grid's TABLE.md: the configs of
# CONFIG_DIR (<stem>.yaml matching *-w*) with no <stem>.json in RESULTS_DIR.
#   scripts/render/list_missing.sh CONFIG_DIR RESULTS_DIR SCRIPT
# SCRIPT is the grid script named as the way to run them (scripts/experiments/uci_width.sh).
. "$(dirname "$0")/../help.sh"
set -euo pipefail
config_dir=$1 dir=$2 script=$3
shopt -s nullglob
missing=()
for c in "$config_dir"/*-w*.yaml; do
  stem=$(basename "$c" .yaml)
  [[ -f $dir/$stem.json ]] || missing+=("\`$stem\`")
done
if ((${#missing[@]})); then
  echo "**Missing cells** (${#missing[@]} of the configs in \`$config_dir/\` have no result here;"
  echo "\`bash $script\` runs exactly these): ${missing[*]}"
else
  echo "Every config in \`$config_dir/\` has a result here."
fi
