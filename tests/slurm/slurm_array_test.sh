#!/usr/bin/env bash
# Runs scripts/sweep/slurm.sbatch under a real, private, single-node Slurm:
# starts munged, slurmctld and slurmd from a generated configuration in a
# temporary folder, submits a two-task array of two short configs, waits for
# both result files, renders them with `whvi table`, and stops the daemons it
# started by their pid files (also on failure or interruption).
#
#   tests/slurm/slurm_array_test.sh WHVI_BINARY REPO_ROOT
#
# Exit status 77 (ctest: skipped) with a message saying what is missing when
# Slurm cannot be started here: slurm-wlm or munge not installed (scripts/test.sh
# installs them), not root, or a daemon that does not come up.
set -uo pipefail

WHVI=$(readlink -f "${1:?usage: slurm_array_test.sh WHVI_BINARY REPO_ROOT}")
REPO=$(readlink -f "${2:?usage: slurm_array_test.sh WHVI_BINARY REPO_ROOT}")
SKIP=77

skip() {
  echo "SKIPPED: $* (the Slurm array test needs slurm-wlm and munge, Debian 12: apt-get install slurm-wlm munge, and root to start the daemons)"
  exit $SKIP
}
fail() {
  echo "FAILED: $*" >&2
  dump_logs
  exit 1
}

for cmd in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$cmd" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
  command -v "$cmd" >/dev/null 2>&1 || skip "'$cmd' not found"
done
[[ $(id -u) -eq 0 ]] || skip "not running as root"
id munge >/dev/null 2>&1 || skip "no 'munge' user (the munge package creates it)"
[[ -x $WHVI ]] || fail "whvi binary '$WHVI' not found"

T=$(mktemp -d /tmp/whvi-slurm.XXXXXX) || fail "mktemp"
chmod 755 "$T"
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/work/out/logs" "$T/work/cfg" "$T/log"
chown munge:munge "$T/munge"
chmod 700 "$T/munge"

dump_logs() {
  for f in "$T"/log/* "$T"/work/out/logs/*; do
    [[ -f $f ]] || continue
    echo "----- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
}

stop_daemons() {
  local pf pid
  for pf in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
    [[ -f $pf ]] || continue
    pid=$(cat "$pf" 2>/dev/null) || continue
    [[ $pid =~ ^[0-9]+$ ]] || continue
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
cleanup() {
  stop_daemons
  if [[ ${KEEP_SLURM_TMP:-0} == 1 ]]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- munge: its own key, socket and pid file, run as the munge user -------
dd if=/dev/urandom of="$T/munge/munge.key" bs=1 count=1024 status=none
chown munge:munge "$T/munge/munge.key"
chmod 400 "$T/munge/munge.key"
SOCKET=$T/munge/munge.socket
runuser -u munge -- munged --force --key-file="$T/munge/munge.key" --socket="$SOCKET" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" >"$T/log/munged.out" 2>&1 ||
  { cp "$T/munge/munged.log" "$T/log/" 2>/dev/null; dump_logs; skip "munged did not start"; }
for _ in $(seq 50); do [[ -S $SOCKET ]] && break; sleep 0.1; done
[[ -S $SOCKET ]] || skip "munged did not create its socket"

# --- slurm.conf: one node with this machine's CPUs and memory --------------
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
BASE=$((20000 + RANDOM % 20000))
while ! port_free "$BASE" || ! port_free $((BASE + 1)); do BASE=$((BASE + 2)); done
cat >"$T/slurm.conf" <<CONF
ClusterName=whvitest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$BASE
SlurmdPort=$((BASE + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=whvitest Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$T/slurm.conf

slurmctld -f "$SLURM_CONF" -i >"$T/log/slurmctld.out" 2>&1 || { dump_logs; skip "slurmctld did not start"; }
slurmd -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 || { dump_logs; skip "slurmd did not start"; }
up=0
for _ in $(seq 100); do
  state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -1)
  [[ $state == idle* ]] && { up=1; break; }
  sleep 0.2
done
((up)) || { dump_logs; skip "the node did not become idle (state '${state:-none}')"; }
echo "slurm: controller and node up on $HOST (ports $BASE, $((BASE + 1))), $CPUS CPUs"

# --- two short configs, a list file, one array -----------------------------
kinds=(whvi mcd)
for i in 0 1; do
  cat >"$T/work/cfg/slurm-test-$i.yaml" <<CFG
data: {dataset: "synthetic:borehole", protocol: paper, splits: 1}
model: {kind: ${kinds[$i]}, depth: 1, width: 16}
training: {steps_fixed_noise: 50, steps: 150, batch_size: 32, seed: $((11 + i))}
evaluation: {mc_samples: 8}
output: {dir: results}
CFG
done
printf '# two configs\ncfg/slurm-test-0.yaml\n\ncfg/slurm-test-1.yaml\n' >"$T/work/list.txt"

cd "$T/work" || fail "cd"
JOB=$(WHVI=$WHVI sbatch --parsable --array=0-1 --cpus-per-task=1 --mem=256 --time=10 \
  "$REPO/scripts/sweep/slurm.sbatch" list.txt 2>"$T/log/sbatch.err") ||
  fail "sbatch failed: $(cat "$T/log/sbatch.err")"
JOB=${JOB%%;*}
echo "slurm: submitted array job $JOB"
for _ in $(seq 600); do
  [[ -z $(squeue -h -j "$JOB" 2>/dev/null) ]] && break
  sleep 0.5
done
[[ -z $(squeue -h -j "$JOB" 2>/dev/null) ]] || fail "array job $JOB still queued or running after 300 s: $(squeue -j "$JOB")"
for i in 0 1; do
  [[ -f results/slurm-test-$i.json ]] || fail "task $i wrote no results/slurm-test-$i.json"
  [[ -f out/logs/slurm-${JOB}_$i.log ]] || fail "no Slurm log out/logs/slurm-${JOB}_$i.log"
  grep -q "sweep/slurm: task $i " "out/logs/slurm-${JOB}_$i.log" || fail "task $i's log does not name it"
done
"$WHVI" table results/slurm-test-0.json results/slurm-test-1.json --paper "" --out TABLE.md >"$T/log/table.out" 2>&1 ||
  fail "whvi table failed: $(cat "$T/log/table.out")"
grep -q "WHVI ours" TABLE.md && grep -q "MCD ours" TABLE.md ||
  fail "TABLE.md does not show both experiments (WHVI and MCD): $(cat TABLE.md)"
echo "slurm: both tasks finished, both results rendered"
exit 0
