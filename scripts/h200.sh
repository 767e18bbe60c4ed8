#!/usr/bin/env bash
# Run on the H200 machine through the device tool (from the repository root):
#   bash scripts/h200.sh
# Builds there, runs the GPU tests, the main job and a small recording for the CPU test
# fixtures, and puts logs and tarred run folders into $OUT (at most 8 files come back).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-/tmp/xb-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda-13.0/bin:$PATH
export XB_BUILD_DIR=build-h200 XB_JOBS=16
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  nvcc --version | tail -1
} 2>&1 | tee "$OUT/machine.txt"

bash scripts/setup.sh > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "build ok"

ctest --test-dir build-h200 -L gpu --output-on-failure 2>&1 | tee "$OUT/gpu_tests.log" | tail -15

rm -rf /tmp/xb-main /tmp/xb-small
( time ./build-h200/bench --size 64,4096 --warmup --out /tmp/xb-main ) 2>&1 | tee "$OUT/main.log" | tail -60
echo "main exit: ${PIPESTATUS[0]}" | tee -a "$OUT/main.log"
./build-h200/bench --size 64,256 --wait-steps 1 --warmup-steps 1 --active-steps 3 --out /tmp/xb-small \
  > "$OUT/small.log" 2>&1
echo "small exit: $?" | tee -a "$OUT/small.log"
tar -czf "$OUT/runs.tar.gz" -C /tmp xb-main xb-small
ls -la "$OUT"
