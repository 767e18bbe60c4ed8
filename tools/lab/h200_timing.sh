#!/usr/bin/env bash
# Issue 4's evidence on the H200 (run through the device tool, from the repository root):
#   bash tools/lab/h200_timing.sh
# Builds in build-h200, runs the GPU tests, then hot and cold runs of every op at 64..8192 bf16
# with the blocking kernel on and off, two back-to-back 4096 runs with and without --warmup, and a
# small recording (the CPU tests' replay fixture). Tables: tools/lab/timing_report.py.
# Everything lands in $OUT/timing.tar.gz plus $OUT/timing_report.md.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-timing logs runs
h200_machine "$W/logs/machine.txt"
h200_build_or_exit "$W/logs/build.log" 40
echo "build ok"
B=./build-h200/bench
if [ "${XB_SKIP_GPU_TESTS:-0}" != 1 ]; then
  ctest --test-dir build-h200 -L gpu --output-on-failure > "$W/logs/gpu_tests.log" 2>&1
  echo "gpu tests exit: $?" | tee -a "$W/logs/gpu_tests.log"
fi
SIZES=64,256,1024,4096,8192
run() {  # run NAME ARGS...: one bench run, its log, its exit code
  local name=$1; shift
  local t0=$(date +%s%N)
  "$B" "$@" --out "$W/runs/$name" > "$W/logs/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$W/logs/runs.txt"
}
run hot-on --size $SIZES --warmup
# The no-blocking runs only make the point: a shorter stopping rule keeps them quick.
run hot-off --size $SIZES --warmup --no-blocking --min-time 0.2 --max-time 1
run cold-on --size $SIZES --warmup --mode cold --max-time 1.5
run cold-off --size $SIZES --warmup --mode cold --no-blocking --min-time 0.2 --max-time 1
run warm-1 --size 4096 --warmup
run warm-2 --size 4096 --warmup
run nowarm-1 --size 4096
run nowarm-2 --size 4096
[ "${XB_SKIP_SMALL:-0}" = 1 ] || run small --size 64,256 --wait-steps 1 --warmup-steps 1 --active-steps 3 --min-time 0.05 --max-time 0.5 --batch 8
copy=$(grep -o "copy [0-9]* GB/s" "$W/logs/cold-on.log" | grep -o "[0-9]*" | head -1)
l2=$(grep -o "L2 [0-9]* MiB" "$W/logs/cold-on.log" | grep -o "[0-9]*" | head -1)
python3 tools/lab/timing_report.py --hot-on "$W/runs/hot-on" --hot-off "$W/runs/hot-off" \
  --cold-on "$W/runs/cold-on" --cold-off "$W/runs/cold-off" --repeat "$W/runs/warm-1" "$W/runs/warm-2" \
  --nowarm "$W/runs/nowarm-1" "$W/runs/nowarm-2" --l2-mib "${l2:-0}" --copy-gbps "${copy:-0}" \
  > "$OUT/timing_report.md" 2> "$W/logs/report.err"
echo "report exit: $?" >> "$W/logs/runs.txt"
cat "$W/logs/runs.txt"
# The big runs' raw sessions and traces stay behind (tens of MB); their tables, events and reports come back.
for d in hot-on hot-off cold-on cold-off warm-1 warm-2 nowarm-1 nowarm-2; do
  rm -f "$W/runs/$d/raw_session.json" "$W/runs/$d/trace_only.json" "$W/runs/$d/full.json"
done
tar -czf "$OUT/timing.tar.gz" -C "$W" .
ls -la "$OUT"
