#!/usr/bin/env bash
# ctest `slurm_qualify` (label cpu): scripts/slurm/ through Slurm's own daemons on this machine.
#
#   tests/slurm/test_slurm_qualify.sh REPO_ROOT BENCH_EXE
#
# Starts munged, slurmctld and slurmd in a temporary folder with a one-node configuration (own munge
# key, own ports, own state; the machine's Slurm configuration, if any, is not touched), submits a
# fleet qualification of 3 array tasks with scripts/slurm/submit_qualify.sh, waits for the
# aggregation job, checks its report, and stops the daemons it started (by their pids).
#
# What is simulated: the machine has no GPU, so each task's `bench qualify --devices all` is a stub
# that writes the H200's recorded qualify.json (results/h200/qualify-2026-11-29/pass-qualify.json)
# as node<task> (task 1's first fixture turned into a regression); everything else is real: the job
# array, the per-task folders, the afterany dependency, and the aggregation job running the real
# `bench qualify --aggregate`. Also `sbatch --test-only` on both batch scripts.
#
# Skipped (exit 77, "SKIPPED: why") without root (slurmd must run as root), without slurmctld,
# slurmd, munged or sbatch (Debian: apt-get install slurm-wlm munge), or with XB_SLURM_TEST=0.
set -uo pipefail
repo=${1:?usage: test_slurm_qualify.sh REPO_ROOT BENCH_EXE}
bench=${2:?usage: test_slurm_qualify.sh REPO_ROOT BENCH_EXE}
skip() { echo "SKIPPED: $*"; exit 77; }
[ "${XB_SLURM_TEST:-1}" = 0 ] && skip "XB_SLURM_TEST=0"
for tool in slurmctld slurmd munged sbatch squeue scontrol; do
  command -v "$tool" > /dev/null || skip "$tool not found (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd needs root to start jobs; run as root"

T=$(mktemp -d /tmp/xb-slurm-test.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/fleet/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
  exit 1
}

host=$(hostname -s 2> /dev/null || hostname)
base=$((20000 + ($$ % 20000)))
mkdir -p "$T/state" "$T/spool" "$T/fleet"
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none && chmod 400 "$T/munge.key"
munged --force --socket="$T/munge.socket" --key-file="$T/munge.key" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed" --foreground > /dev/null 2>&1 &
pids+=($!)
cat > "$T/slurm.conf" <<CONF
ClusterName=xbtest
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MinJobAge=600
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=xb Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$T/slurm.conf
for _ in $(seq 50); do [ -S "$T/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$T/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" > "$T/slurmd.stdout" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 100); do
  if sinfo -h -o '%T' 2> /dev/null | grep -qE '^(idle|mixed|allocated)'; then ready=1; break; fi
  sleep 0.2
done
[ $ready = 1 ] || fail "the one-node Slurm cluster did not come up"
echo "ok: slurmctld and slurmd up on $host (ports $base, $((base + 1)))"

# sbatch --test-only: the batch scripts and their options as Slurm reads them.
for s in qualify_array.sbatch aggregate.sbatch; do
  XB_FLEET_DIR=$T/fleet sbatch --test-only --export=ALL "$repo/scripts/slurm/$s" > "$T/testonly.txt" 2>&1 \
    || fail "sbatch --test-only $s: $(cat "$T/testonly.txt")"
done
echo "ok: sbatch --test-only accepts both batch scripts"

# The stub: `bench qualify --devices ... --out DIR` writes the recorded qualify.json as node<task>;
# anything else (the aggregation) runs the real bench.
cat > "$T/bench" <<STUB
#!/usr/bin/env bash
if [ "\$1" = qualify ] && [[ " \$* " == *" --devices "* ]]; then
  out=; prev=; for a in "\$@"; do [ "\$prev" = --out ] && out=\$a; prev=\$a; done
  mkdir -p "\$out"
  python3 - "$repo/results/h200/qualify-2026-11-29/pass-qualify.json" "\$out/qualify.json" "\${SLURM_ARRAY_TASK_ID}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["host"] = "node" + sys.argv[3]
if sys.argv[3] == "1":
    doc["result"], doc["exit_code"] = "regression", 1
    doc["fixtures"][0].update(verdict="regression", delta_pct=12.5)
json.dump(doc, open(sys.argv[2], "w"))
sys.exit(doc["exit_code"])
PY
  exit \$?
fi
exec "$bench" "\$@"
STUB
chmod +x "$T/bench"

cd "$repo" || fail "no $repo"
submit=$(XB_FLEET_DIR=$T/fleet XB_BENCH=$T/bench XB_PER=gpu XB_GRES=none scripts/slurm/submit_qualify.sh 3 2>&1) \
  || fail "submit_qualify.sh: $submit"
echo "ok: $submit"
agg=$(echo "$submit" | sed -n 's/.*aggregation job \([0-9]*\).*/\1/p')
[ -n "$agg" ] || fail "no aggregation job id in: $submit"
state=
for _ in $(seq 300); do
  state=$(scontrol show job "$agg" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
  sleep 0.2
done
exitcode=$(scontrol show job "$agg" | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')
echo "aggregation job $agg: $state, exit code $exitcode"
[ "$exitcode" = 1 ] || fail "aggregation exit code $exitcode, expected 1 (node1 regressed)"
python3 - "$T/fleet/aggregate/aggregate.json" <<'PY' || fail "the fleet report is not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
nodes = {n["node"]: n["result"] for n in doc["nodes"]}
assert doc["result"] == "regression", doc["result"]
assert nodes == {"node0": "pass", "node1": "regression", "node2": "pass"}, nodes
assert len(doc["qualifications"]) == 3, doc["qualifications"]
print("ok: aggregate.json: nodes", nodes)
PY
for f in aggregate.md aggregate.xml; do [ -s "$T/fleet/aggregate/$f" ] || fail "no $f"; done
ls "$T"/fleet/xb-qualify-*_0.out > /dev/null 2>&1 || fail "no array task output"
echo "PASSED: a 3-task fleet qualification through slurmctld/slurmd, aggregated by bench qualify --aggregate"
