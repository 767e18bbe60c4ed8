#!/usr/bin/env bash
# Issue 7's evidence on the H200 (through the device tool, from the repository root):
#   bash tools/lab/h200_vs_torch.sh
# Builds in build-h200, runs the GPU tests, times the main job (`bench --size 64,4096 --warmup`,
# target <= 20 s wall), an event-only run (--no-cupti), then tools/lab/vs_torch.py (kernels,
# copy bandwidth and profiler overhead side by side with PyTorch). Results: $OUT/vs_torch.tar.gz
# and $OUT/vs_torch.md.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-vs-torch logs
h200_machine "$W/logs/machine.txt"
t0=$(date +%s)
h200_build_or_exit "$W/logs/build.log" 40
echo "build ok ($(( $(date +%s) - t0 )) s)"
if [ "${XB_SKIP_GPU_TESTS:-0}" != 1 ]; then
  ctest --test-dir build-h200 -L gpu --output-on-failure > "$W/logs/gpu_tests.log" 2>&1
  echo "gpu tests exit: $?"; grep -E "tests passed|Failed|FAILED" "$W/logs/gpu_tests.log" | head -20
fi
t1=$(date +%s%N)
./build-h200/bench --size 64,4096 --warmup --out "$W/e2e" > "$W/logs/e2e.log" 2>&1
echo "main job exit $?, wall $(( ($(date +%s%N) - t1) / 1000000 )) ms" | tee "$W/logs/e2e_time.txt"
tail -4 "$W/logs/e2e.log"
./build-h200/bench --size 64,4096 --no-cupti --min-time 0.2 --out "$W/event-only" > "$W/logs/event-only.log" 2>&1
echo "event-only exit $?"; grep -E "^results|not run" "$W/logs/event-only.log" | head -3
python3 tools/lab/vs_torch.py --bench ./build-h200/bench --out "$W/vs" > "$W/logs/vs_torch.log" 2>&1
echo "vs_torch exit $?"
cp "$W/vs/vs_torch.md" "$OUT/" 2>/dev/null
for d in "$W"/vs/*/; do rm -f "$d/raw_session.json" "$d/trace_only.json" "$d/full.json"; done
rm -f "$W/e2e/raw_session.json"
tar -czf "$OUT/vs_torch.tar.gz" -C "$W" .
ls -la "$OUT"
