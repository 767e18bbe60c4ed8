#!/usr/bin/env bash
# Run on the H200 machine through the device tool (from the repository root):
#   bash tools/lab/h200.sh [--sweep]
# Builds there, runs the GPU tests (ctest label `gpu`), the main job (`bench --size 64,4096
# --warmup`) and a small recording (the CPU tests' replay fixture); with --sweep also
# tools/lab/h200_sweep.sh (calibration, sweep, plots). Everything lands in one tarball, $OUT/h200.tar.gz (the device
# tool brings back at most 8 files), plus $OUT/summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-h200 logs
sweep=0
for a in "$@"; do
  case "$a" in --sweep) sweep=1 ;; *) echo "h200.sh: unknown option $a"; exit 2 ;; esac
done
h200_machine "$W/logs/machine.txt"
cat "$W/logs/machine.txt"

h200_build_or_exit "$W/logs/build.log" 50
echo "build ok"

ctest --test-dir build-h200 -L gpu --output-on-failure > "$W/logs/gpu_tests.log" 2>&1
echo "gpu tests exit: $?" | tee -a "$W/logs/gpu_tests.log"
./build-h200/tests/xb_gpu_tests 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)" | tee -a "$W/logs/gpu_tests.log"

( time ./build-h200/bench --size 64,4096 --warmup --out "$W/e2e" ) > "$W/logs/main.log" 2>&1
echo "main exit: $?" >> "$W/logs/main.log"
tail -25 "$W/logs/main.log"

./build-h200/bench --size 64,256 --wait-steps 1 --warmup-steps 1 --active-steps 3 --out "$W/small" \
  > "$W/logs/small.log" 2>&1
echo "small exit: $?" | tee -a "$W/logs/small.log"

if [ $sweep -eq 1 ]; then
  OUT="$W/sweep-out" bash tools/lab/h200_sweep.sh 2>&1 | tail -60
fi

tar -czf "$OUT/h200.tar.gz" -C "$W" .
ls -la "$OUT"
