#!/usr/bin/env bash
# The fused 1D-bias addmm against the plain GEMM, interleaved in one process (`bench ab`), on the
# H200 (through the device tool, from the repository root):
#   bash tools/lab/h200_fused.sh
# Builds in build-h200, runs the GPU tests of bench ab, tune-add and the CUPTI kind subsets, then
# `bench ab --op matmul,addmm_bias1d` three times at 4096 and once at 8192. Results: $OUT/fused.tar.gz
# and $OUT/summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-fused logs
h200_machine "$W/logs/machine.txt"
h200_build_or_exit "$W/logs/build.log" 40
./build-h200/tests/xb_gpu_tests --gtest_filter='*BenchAb*:*BenchTuneAdd*:*CuptiSourceRecordsOnly*' > "$W/logs/new_gpu_tests.log" 2>&1
echo "new GPU tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$W/logs/new_gpu_tests.log" | tr '\n' ' ')"
for run in 4096-1 4096-2 4096-3 8192-1; do
  ./build-h200/bench ab --op matmul,addmm_bias1d --size "${run%-*}" --out "$W/ab-$run.json" > "$W/ab-$run.md" 2>&1
  echo "ab $run exit $?: $(grep '^B / A' "$W/ab-$run.md")"
done
{ cat "$W/logs/machine.txt"; grep -E '^\[  (PASSED|FAILED)' "$W/logs/new_gpu_tests.log"; for f in "$W"/ab-*.md; do echo "== $f"; cat "$f"; done; } > "$OUT/summary.txt"
tar -czf "$OUT/fused.tar.gz" -C "$W" .
