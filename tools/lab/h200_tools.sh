#!/usr/bin/env bash
# Issues 8 and 9's evidence with other tools on the H200 (run through the device tool, from the
# repository root):   bash tools/lab/h200_tools.sh
# Builds in build-h200, runs the GPU tests (ctest label gpu: interrupts at random points, NVTX both
# ways, the copy kernel, 1000 sessions, dropped records), keeps the NVTX test's recorded session,
# then runs bench under Nsight Systems (CUPTI already taken: bench must say so, and event-only
# mode must work there) and under Nsight Compute with NVTX on (it must see crossbench's ranges),
# and the main job. Everything lands in $OUT/tools.tar.gz plus $OUT/tools_summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-tools logs nvtx nsys ncu runs
S="$OUT/tools_summary.txt"
: > "$S"
h200_machine "$W/logs/machine.txt"
h200_build_or_exit "$W/logs/build.log" 40
echo "build ok" | tee -a "$S"
B=./build-h200/bench
SMALL=(--op add --size 64 --wait-steps 1 --warmup-steps 0 --active-steps 3 --min-samples 3 --min-time 0.01 --max-time 0.2 --batch 1)

ctest --test-dir build-h200 -L gpu --output-on-failure > "$W/logs/gpu_tests.log" 2>&1
echo "gpu tests (ctest -L gpu) exit: $?" | tee -a "$S"
grep -E "tests passed|Test +#|Passed|Failed|Skipped" "$W/logs/gpu_tests.log" | tail -20 >> "$S"

XB_NVTX_KEEP="$W/nvtx/session" ./build-h200/tests/xb_nvtx_gpu_test > "$W/logs/nvtx_gpu.log" 2>&1
echo "nvtx gpu test (session kept) exit: $?" | tee -a "$S"

# Nsight Systems: CUPTI is the profiler's own there.
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-not found}" | tee -a "$S"
ls /opt/nvidia 2>&1 | head >> "$S"
if [ -n "$NSYS" ] && [ "${XB_SKIP_NSYS:-0}" != 1 ]; then
  "$NSYS" --version >> "$S" 2>&1
  for mode in cupti event-only; do
    extra=(); [ $mode = event-only ] && extra=(--no-cupti)
    timeout 150 "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true --output "$W/nsys/$mode" \
      "$B" "${SMALL[@]}" "${extra[@]}" --out "$W/nsys/run-$mode" > "$W/logs/nsys_$mode.log" 2>&1
    echo "bench under nsys ($mode): exit $?" | tee -a "$S"
    grep -iE "cupti|error|event-only|not run|validation" "$W/logs/nsys_$mode.log" | head -8 >> "$S"
  done
  ls -la "$W/nsys" >> "$S" 2>&1
  for rep in "$W"/nsys/*.nsys-rep; do
    [ -f "$rep" ] && timeout 60 "$NSYS" stats --report nvtx_sum --format csv "$rep" > "$rep.nvtx_sum.csv" 2>&1
  done
fi

# Nsight Compute with NVTX: the kernels it profiles carry crossbench's ranges. ncu serializes and
# replays kernels, so the blocking kernel (released by the host) would time out: --no-blocking.
if command -v ncu > /dev/null; then
  timeout 150 ncu --nvtx --nvtx-include "crossbench@ProfilerStep#1/" --section LaunchStats \
    "$B" "${SMALL[@]}" --no-cupti --no-blocking --out "$W/ncu/run1" > "$W/logs/ncu_include.log" 2>&1
  echo "ncu --nvtx-include crossbench@ProfilerStep#1/: exit $?" | tee -a "$S"
  timeout 150 ncu --nvtx -k regex:add_vectorized --launch-count 12 --section LaunchStats --print-details all \
    "$B" "${SMALL[@]}" --no-cupti --no-blocking --out "$W/ncu/run2" > "$W/logs/ncu_stack.log" 2>&1
  echo "ncu --nvtx (NVTX stacks of the add kernels): exit $?" | tee -a "$S"
  grep -ciE "crossbench" "$W/logs/ncu_include.log" "$W/logs/ncu_stack.log" >> "$S"
  grep -iE "==ERR|==WARNING|error" "$W/logs/ncu_include.log" "$W/logs/ncu_stack.log" | head -5 >> "$S"
else
  echo "ncu: not found" | tee -a "$S"
fi

if [ "${XB_SKIP_MAIN:-0}" != 1 ]; then
  ( time "$B" --size 64,4096 --warmup --out "$W/runs/e2e" ) > "$W/logs/main.log" 2>&1
  echo "main job exit: $?" | tee -a "$S"
  tail -4 "$W/logs/main.log" >> "$S"
fi
rm -f "$W/runs/e2e/raw_session.json" "$W/runs/e2e/trace_only.json" "$W/runs/e2e/full.json"
rm -f "$W"/nsys/*.qdstrm  # hundreds of MB; nsys here cannot turn them into reports (see the summary)
tar -czf "$OUT/tools.tar.gz" -C "$W" .
cat "$S"
