# Sourced first by every script in scripts/ (before it does anything):
# `-h` or `--help` as the first argument prints the calling script's header
# comment, its usage, and exits 0.
#
#   . "$(dirname "$0")/../help.sh"   # (or ./help.sh from scripts/ itself)
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
  exit 0
fi
