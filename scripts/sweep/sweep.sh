#!/usr/bin/env bash
# Runs many experiment configs in parallel with GNU parallel, one `whvi train` per config:
#
#   scripts/sweep/sweep.sh [-j JOBS] [--threads-per-job N] [--whvi PATH] [--set KEY=VALUE]... CONFIG...
#
#   -j JOBS                jobs at once (default: number of cores / threads per job, at least 1)
#   --threads-per-job N    --threads given to each whvi (default 1)
#   --whvi PATH            the whvi binary (default: $WHVI, else $BUILD_DIR/whvi, else build/whvi)
#   --set KEY=VALUE        passed to every `whvi train` (e.g. --set data.splits=4 for a first,
#                          shortened pass; a later run without it extends each experiment to the
#                          config's splits, keeping the finished ones)
#
# Each job runs `$WHVI --threads N train --config CFG --resume` and logs to
# out/logs/<config-stem>.log. The job log is out/logs/sweep.joblog; with --resume-failed a
# re-run of the same command skips the configs that already succeeded and re-runs the failed or
# unfinished ones (and `whvi train --resume` continues each from its last finished split).
# GNU parallel matches jobs by their number in the job log, so the job log is only reused when
# the config list, whvi path and threads are the same as last time (out/logs/sweep.args);
# otherwise it is moved aside and every config is started, each still resuming its own results.
#
# Two sweeps at once must not share a job log: give the second its own folder with
# SWEEP_LOG_DIR=out/logs-2 (default out/logs).
#
# Example: scripts/sweep/sweep.sh -j 2 configs/uci/yacht-*.yaml
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

die() {
  echo "sweep: $*" >&2
  exit 2
}

JOBS=""
THREADS=1
WHVI=${WHVI:-${BUILD_DIR:-build}/whvi}
CONFIGS=()
SETS=()
while (($#)); do
  case "$1" in
    -j | --jobs)
      [[ $# -ge 2 ]] || die "$1 needs a value"
      JOBS=$2
      shift 2
      ;;
    -j*)
      JOBS=${1#-j}
      shift
      ;;
    --threads-per-job)
      [[ $# -ge 2 ]] || die "$1 needs a value"
      THREADS=$2
      shift 2
      ;;
    --whvi)
      [[ $# -ge 2 ]] || die "$1 needs a value"
      WHVI=$2
      shift 2
      ;;
    --set)
      [[ $# -ge 2 && $2 == *=* ]] || die "--set needs KEY=VALUE"
      SETS+=(--set "$2")
      shift 2
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      CONFIGS+=("$@")
      break
      ;;
    -*)
      die "unknown option '$1' (see scripts/sweep/sweep.sh --help)"
      ;;
    *)
      CONFIGS+=("$1")
      shift
      ;;
  esac
done

[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "--threads-per-job '$THREADS' is not a positive integer"
CORES=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
if [[ -z $JOBS ]]; then
  JOBS=$((CORES / THREADS))
  ((JOBS >= 1)) || JOBS=1
fi
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "-j '$JOBS' is not a positive integer"
((${#CONFIGS[@]})) || die "no configs given (usage: scripts/sweep/sweep.sh [-j JOBS] [--threads-per-job N] [--whvi PATH] CONFIG...)"

command -v parallel >/dev/null 2>&1 ||
  die "GNU parallel is not installed: run scripts/setup.sh (it installs the 'parallel' package)"
parallel --version 2>/dev/null | grep -q "GNU parallel" ||
  die "'parallel' is not GNU parallel (moreutils has one of the same name): run scripts/setup.sh"
[[ -x $WHVI ]] || die "whvi binary '$WHVI' not found or not executable: build it with scripts/setup.sh, or pass --whvi PATH"

declare -A seen=()
for cfg in "${CONFIGS[@]}"; do
  [[ -f $cfg ]] || die "config '$cfg' does not exist"
  stem=$(basename "${cfg%.*}")
  [[ -z ${seen[$stem]:-} ]] || die "configs '${seen[$stem]}' and '$cfg' would share the log out/logs/$stem.log"
  seen[$stem]=$cfg
done

LOG_DIR=${SWEEP_LOG_DIR:-out/logs}  # another folder per concurrent sweep (each has its own job log)
JOBLOG=$LOG_DIR/sweep.joblog
ARGS_FILE=$LOG_DIR/sweep.args
mkdir -p "$LOG_DIR"
args_now=$(printf '%s\n' "whvi=$WHVI" "threads=$THREADS" "sets=${SETS[*]:-}" "${CONFIGS[@]}")
if [[ -f $JOBLOG ]] && [[ "$(cat "$ARGS_FILE" 2>/dev/null)" != "$args_now" ]]; then
  old_log=$JOBLOG.$(date -u +%Y%m%dT%H%M%SZ)
  mv "$JOBLOG" "$old_log"
  echo "sweep: configs/threads/whvi differ from the last sweep; its job log moved to $old_log"
fi
printf '%s\n' "$args_now" >"$ARGS_FILE"
if ((JOBS * THREADS > CORES)); then
  echo "sweep: warning: $JOBS jobs x $THREADS threads > $CORES cores; timings will be disturbed" >&2
fi
echo "sweep: ${#CONFIGS[@]} configs, $JOBS at once, $THREADS thread(s) each, whvi=$WHVI"
echo "sweep: logs in $LOG_DIR/<config>.log, job log $JOBLOG (a re-run resumes)"

# Each job: whvi's output (stdout and stderr) goes to its own log, appended so that a resumed
# run keeps the history. {/.} is the config's file name without folder and extension.
# OMP/OpenBLAS threads are pinned as well: torch.set_num_threads does not bind OpenBLAS.
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
sets_q=""
((${#SETS[@]})) && sets_q=$(printf '%q ' "${SETS[@]}")
rc=0
parallel --jobs "$JOBS" --joblog "$JOBLOG" --resume-failed --line-buffer --tagstring '{/.}' \
  "echo \"=== \$(date -u +%FT%TZ) {}\" >> $LOG_DIR/{/.}.log;" \
  "$(printf '%q' "$WHVI") --threads $THREADS train --config {} --resume $sets_q>> $LOG_DIR/{/.}.log 2>&1" \
  "&& echo done || { s=\$?; echo \"FAILED (exit \$s), see $LOG_DIR/{/.}.log\"; exit \$s; }" \
  ::: "${CONFIGS[@]}" || rc=$?

# Summary from the job log (columns: Seq Host Starttime JobRuntime Send Receive Exitval Signal Command).
# The job log holds every attempt; the last line per config is its current state.
echo
echo "sweep summary ($JOBLOG):"
awk -F'\t' -v logdir="$LOG_DIR" '
  $1 == "Seq" { next }
  {
    cmd = $9
    if (match(cmd, /--config [^ ]+/)) cfg = substr(cmd, RSTART + 9, RLENGTH - 9); else cfg = cmd
    state[cfg] = ($7 == 0 && $8 == 0) ? "ok" : ($8 != 0 ? "killed (signal " $8 ")" : "FAILED (exit " $7 ")")
    secs[cfg] = $4
    if (!(cfg in order)) { order[cfg] = ++n; names[n] = cfg }
  }
  END {
    ok = 0
    for (i = 1; i <= n; i++) {
      c = names[i]
      if (state[c] == "ok") ok++
      stem = c; sub(/.*\//, "", stem); sub(/\.[^.]*$/, "", stem)
      printf "  %-40s %-22s %8.0f s  %s/%s.log\n", c, state[c], secs[c], logdir, stem
    }
    printf "  %d of %d configs succeeded\n", ok, n
  }' "$JOBLOG"
if ((rc != 0)); then
  echo "sweep: $rc job(s) failed; fix and re-run the same command to retry only those" >&2
fi
exit "$rc"
