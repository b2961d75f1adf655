#!/usr/bin/env bash
# The common part of the grid scripts (uci_width.sh, uci_class.sh,
# uci_shallow.sh): parses their command line, runs scripts/sweep/sweep.sh on the
# selected configs (GNU parallel; each run resumes its finished splits), then
# the grid's render command.
#
#   scripts/sweep/grid.sh NAME CONFIG_DIR DEFAULT_PATTERN CALLER RENDER... -- [-j JOBS] [--set KEY=VALUE]... [--render-only] [PATTERN]
#
# PATTERN globs config stems in CONFIG_DIR (base*.yaml are never run); CALLER is
# the calling script (its path from the repository's root), which -h runs with --help.
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$1 dir=$2 default=$3 caller=$4
shift 4
render=()
while (($#)) && [[ $1 != -- ]]; do render+=("$1"); shift; done
(($#)) && shift
args=()
render_only=0
while (($#)); do
  case $1 in
    -j|--set) (($# >= 2)) || { echo "$name: $1 needs a value" >&2; exit 2; }; args+=("$1" "$2"); shift 2 ;;
    --render-only) render_only=1; shift ;;
    -h|--help) exec bash "$caller" --help ;;  # its scripts/help.sh hook prints its header
    -*) echo "$name: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
pattern=${1:-$default}
shopt -s nullglob
if ((!render_only)); then
  configs=()
  for c in "$dir"/$pattern.yaml; do
    if [[ -f $c && $(basename "$c") != base*.yaml ]]; then configs+=("$c"); fi
  done
  ((${#configs[@]})) || { echo "$name: no config matches $dir/$pattern.yaml" >&2; exit 2; }
  bash scripts/sweep/sweep.sh "${args[@]}" "${configs[@]}"
fi
"${render[@]}"
