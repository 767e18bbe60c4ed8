#!/usr/bin/env bash
# Issue 36 on the H200 machine, through the device tool (from the repository root):
#   bash tools/lab/h200_signature_cost.sh [ROUNDS]
# What the work-signature probe costs the main job: `bench --size 64,4096 --warmup` with the probe
# and with --no-work-signature, interleaved (A B B A per round, ROUNDS rounds, default 1), in one
# machine session. Writes $OUT/cost.md: each run's wall time, exit code and verdict line, the
# median per arm and their ratio, and the probe's own time (events.json fixtures[].work.probe_s,
# summed per run) as a fraction of the run's wall time: the direct figure, which run-to-run drift
# of the power-capped GEMMs (+-1 s and more) cannot blur. Also runs the GPU tests (ctest -L gpu, but the user-pattern corpus).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
rounds=${1:-1}
h200_workdir /tmp/xb-signature-cost runs
h200_machine "$OUT/machine.txt"
phase "build"
h200_build_or_exit "$W/build.log" 40
phase "main job, interleaved"
: > "$W/runs.tsv"
for r in $(seq 1 "$rounds"); do
  for arm in with without without with; do
    flag=""
    [ "$arm" = without ] && flag="--no-work-signature"
    dir="$W/runs/r$r-$arm-$RANDOM"
    s=$(date +%s%N)
    # shellcheck disable=SC2086  # flag: empty or one word
    build-h200/bench --size 64,4096 --warmup $flag --out "$dir" > "$dir.log" 2>&1
    rc=$?
    e=$(date +%s%N)
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$arm" "$rc" "$(( (e - s) / 1000000 ))" "$dir" >> "$W/runs.tsv"
  done
done
python3 tools/lab/signature_cost.py "$W/runs.tsv" > "$OUT/cost.md"
cat "$OUT/cost.md"
phase "GPU tests"
# user_patterns: its whole corpus runs in tools/lab/h200_user_patterns.sh.
ctest --test-dir build-h200 -L gpu -E user_patterns --output-on-failure > "$OUT/gpu_tests.txt" 2>&1
check "ctest -L gpu" "exit $?: $(grep -E 'tests passed|tests failed' "$OUT/gpu_tests.txt" | tail -1)"
phase "done"
