#!/usr/bin/env bash
# The README's Slurm job array, run for real: a single-node Slurm (Debian's slurmctld, slurmd,
# slurm-client and munge), started by this script with a private configuration under a temp dir
# and stopped on exit, runs `sweep --grid --shard I/4` as a 4-task array; `merge` of the shards
# must be the unsharded sweep, byte for byte.
# Needs root (the daemons run as root, SlurmUser=root) and Debian's packages (installed if missing).
# Usage: bash scripts/slurm-check.sh [schedplay binary, default target/release/schedplay]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/schedplay}")
log() { echo "[slurm-check] $*" >&2; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
   || ! command -v munged >/dev/null; then
  log "installing slurmctld slurmd slurm-client munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

D=$(mktemp -d /tmp/schedplay-slurm.XXXXXX)
chmod 755 "$D"
PIDS=()
cleanup() {
  # the daemons by their pid files too: munged runs under runuser, which may not pass a signal on
  for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/run/munged.pid"; do
    [ -s "$f" ] && PIDS+=("$(cat "$f")")
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$D"
}
trap cleanup EXIT

# munge: its own key (a private dir) and socket (a dir everyone may enter) under $D; nothing of
# the system's is touched
mkdir -p "$D/munge" "$D/run"
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$D/munge" "$D/run"
chmod 700 "$D/munge" && chmod 400 "$D/munge/munge.key" && chmod 755 "$D/run"
SOCK="$D/run/munge.socket"
runuser -u munge -- munged --key-file="$D/munge/munge.key" --socket="$SOCK" \
  --pid-file="$D/run/munged.pid" --log-file="$D/munge/munged.log" --seed-file="$D/munge/seed" --foreground \
  2>"$D/munged.err" &
PIDS+=($!); disown

HOST=$(hostname -s)
NCPU=$(nproc)
mkdir -p "$D/state" "$D/spool" "$D/out"
export SLURM_CONF="$D/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=schedplay-check
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldPort=36817
SlurmdPort=36818
NodeName=$HOST CPUs=$NCPU State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$D/slurmctld.out" 2>&1 &
PIDS+=($!); disown
slurmd -D -f "$SLURM_CONF" >"$D/slurmd.out" 2>&1 &
PIDS+=($!); disown

# the node comes up idle within seconds
for _ in $(seq 30); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qx idle; then break; fi
  sleep 1
done
if ! sinfo -h -o '%t' 2>/dev/null | grep -qx idle; then
  log "the node did not come up: $(sinfo 2>&1 | tail -2)"
  tail -5 "$D/slurmctld.log" "$D/slurmd.log" >&2 2>/dev/null || true
  exit 1
fi
log "slurm up on $HOST ($NCPU CPUs)"

# a small grid: 8 points, so every one of the 4 shards holds two
cat >"$D/grid.json" <<'EOF'
{"machines": [{"preset": "milan-2s"}, {"preset": "gnr-2s-snc3"}],
 "patch_sets": [{"b": ["skip-not-due"]}, {"a": ["cache-aware"], "b": ["cache-aware", "cas-skip-many-threads"]}],
 "workloads": [{"name": "oltp"}], "cpus": [24, 32], "seconds": 0.004, "repeats": 2}
EOF
# the README's array script, with 4 tasks of one CPU each
cat >"$D/array.sh" <<EOF
#!/bin/bash
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$D/out/task-%a.log
"$BIN" sweep --grid "$D/grid.json" --shard \${SLURM_ARRAY_TASK_ID}/4 --jobs \${SLURM_CPUS_PER_TASK} \\
  > "$D/out/shard-\${SLURM_ARRAY_TASK_ID}.jsonl"
EOF
(cd "$D" && timeout 600 sbatch --wait --chdir="$D" "$D/array.sh") >&2
n=$(ls "$D"/out/shard-*.jsonl 2>/dev/null | wc -l)
if [ "$n" -ne 4 ]; then log "expected 4 shards, found $n"; cat "$D"/out/task-*.log >&2 || true; exit 1; fi
"$BIN" merge "$D"/out/shard-*.jsonl >"$D/merged.jsonl"
"$BIN" sweep --grid "$D/grid.json" >"$D/all.jsonl"
if cmp -s "$D/merged.jsonl" "$D/all.jsonl"; then
  log "4-task array merged to the unsharded sweep: $(wc -l <"$D/all.jsonl") points, identical bytes"
else
  log "merged shards differ from the unsharded sweep"
  diff <(cut -c1-200 "$D/merged.jsonl") <(cut -c1-200 "$D/all.jsonl") >&2 || true
  exit 1
fi
