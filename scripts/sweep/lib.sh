# Sourced by the scripts that run sweeps (scripts/experiments/).

# whvi_of ARGS...: the binary a sweep runs: the value of --whvi among ARGS,
# else $WHVI, else $BUILD_DIR/whvi (BUILD_DIR: build).
whvi_of() {
  local w=${WHVI:-${BUILD_DIR:-build}/whvi}
  while (($#)); do
    if [[ $1 == --whvi && $# -ge 2 ]]; then
      w=$2
      shift 2
    else
      shift
    fi
  done
  printf '%s\n' "$w"
}
