#!/usr/bin/env bash
# Run on the H200 machine through the device tool (from the repository root), after or instead of
# tools/lab/h200.sh:
#   bash tools/lab/h200_sanitize.sh
# Runs NVIDIA compute-sanitizer (CUDA 13.0) with --tool memcheck and --tool racecheck on
#   - the kernel tests of xb_gpu_tests (tests/gpu/test_kernels.cpp: every workload against its
#     host reference, the add kernel's vector/tail/unaligned spans, random fill, the GEMM owner),
#   - a small bench run: --size 64,256 --op add,matmul,addmm,addmm_bias1d --active-steps 2.
# Builds build-h200 first when it is missing (scripts/setup.sh, as tools/lab/h200.sh does).
# Writes into $OUT (default /tmp/xb-out): one log per tool and target (sanitize-<tool>-<target>.log)
# and sanitize-verdict.txt, one line per tool and target:
#   memcheck kernels: CLEAN (0 errors; 95 tests passed) 41 s
# Exit: 0 when every run finished with 0 sanitizer errors; 1 when a sanitizer reported an error,
# a run crashed or timed out, or a test or fixture failed under the sanitizer.
#
# Left out on purpose:
#   - the blocking-kernel tests (GpuTest.Blocking*) and bench's blocking kernel (--no-blocking
#     where bench has it): the kernel spins until the host releases it, and a sanitizer that
#     serializes launches would make every sample wait for its 10 s timeout;
#   - the CUPTI tests (test_profiler_gpu.cpp, test_hardening_gpu.cpp) and CUPTI in bench
#     (--no-cupti where bench has it): CUPTI and the sanitizer both attach to the CUDA driver's
#     tool interface; the sanitizers check the kernels, not the profiler.
# Time: about 1-2 minutes of GPU time per tool on the H200; each run is capped (XB_SAN_TIMEOUT,
# default 150 s) so the whole script stays under ~10 minutes even if a run hangs.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
build=${XB_BUILD_DIR:-build-h200}
cap=${XB_SAN_TIMEOUT:-150}
verdict="$OUT/sanitize-verdict.txt"
: > "$verdict"

sanitizer=$(command -v compute-sanitizer || true)
if [ -z "$sanitizer" ]; then
  echo "h200_sanitize: compute-sanitizer not found (looked in /usr/local/cuda-13.0/bin and PATH)" | tee -a "$verdict"
  exit 1
fi
if [ ! -x "$build/tests/xb_gpu_tests" ] || [ ! -x "$build/bench" ]; then
  echo "h200_sanitize: building $build (scripts/setup.sh)"
  if ! XB_BUILD_DIR="$build" XB_JOBS=${XB_JOBS:-16} bash scripts/setup.sh > "$OUT/sanitize-build.log" 2>&1; then
    tail -30 "$OUT/sanitize-build.log"; echo "h200_sanitize: build FAILED" | tee -a "$verdict"; exit 1
  fi
fi
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$sanitizer" --version | tail -1; } \
  > "$OUT/sanitize-machine.txt" 2>&1

# The kernel tests: tests/gpu/test_kernels.cpp, minus the blocking kernel (see above).
kernel_filter='*WorkloadVerifies*:*AddKernel*:*RandomFill*:GpuTest.AddZeroCountLaunchesNothing:GpuTest.UnwrittenOutputFailsAsNaN:GpuTest.PartlyWrittenOutputFails:GpuTest.CorruptedGemmRowFails:GpuTest.SingleWrongElementFails:GpuTest.GemmNonSquareAndBias:GpuTest.OwnersMoveAndRelease:GpuTest.FailedCallThrowsWithCallText'

# bench: the options this bench has (the timing options arrived with issue 8's timing work).
help=$("$build/bench" --help 2>&1 || true)
bench_args=(--size 64,256 --op add,matmul,addmm,addmm_bias1d --active-steps 2)
has() { grep -q -- "$1" <<< "$help"; }
has --no-blocking && bench_args+=(--no-blocking)
has --no-cupti && bench_args+=(--no-cupti)
has --min-time && bench_args+=(--min-time 0)
has --max-time && bench_args+=(--max-time 1)
has --min-samples && bench_args+=(--min-samples 2)

status=0
# run_one TOOL TARGET COMMAND...: runs COMMAND under compute-sanitizer, writes its log and one
# verdict line.
run_one() {
  local tool=$1 target=$2; shift 2
  local log="$OUT/sanitize-$tool-$target.log" t0 t1 rc errors summary detail ok=1
  t0=$(date +%s)
  # --error-exitcode: tell sanitizer errors (99) apart from the program's own exit code.
  # --report-api-errors no: tests make failing CUDA calls on purpose (FailedCallThrowsWithCallText,
  # and bench's checks); the programs check every call's result themselves.
  timeout --signal=INT --kill-after=20 "$cap" "$sanitizer" --tool "$tool" --error-exitcode 99 \
    --report-api-errors no --print-limit 50 --launch-timeout 60 "$@" > "$log" 2>&1
  rc=$?
  t1=$(date +%s)
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1)
  errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p; s/.*RACECHECK SUMMARY: .*\(([0-9]+) error.*/\1/p' <<< "$summary")
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    detail="TIMED OUT after ${cap} s"; ok=0
  elif [ -z "$summary" ]; then
    detail="NO SUMMARY (exit $rc; the sanitizer did not finish)"; ok=0
  elif [ "${errors:-1}" -ne 0 ] || [ "$rc" -eq 99 ]; then
    detail="ERRORS: $summary"; ok=0
  else
    detail="0 errors"
  fi
  case "$target" in
    kernels)
      local passed failed
      passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' "$log" | tail -1)
      failed=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' "$log" | tail -1)
      detail="$detail; ${passed:-0} tests passed"
      if [ -n "$failed" ]; then detail="$detail, $failed FAILED"; ok=0; fi
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 99 ] && [ $ok -eq 1 ]; then detail="$detail; exit $rc"; ok=0; fi
      ;;
    bench)
      # 0: validated; 1: a validation check or a fixture failed. Timings under instrumentation are
      # not the GPU's, so only a fixture's wrong result counts here ("fixture failed").
      if grep -q "fixture failed" "$log"; then detail="$detail; a fixture FAILED"; ok=0; fi
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 99 ] && [ $ok -eq 1 ]; then detail="$detail; exit $rc"; ok=0; fi
      [ $ok -eq 1 ] && detail="$detail; bench exit $rc"
      ;;
  esac
  local line
  line="$tool $target: $([ $ok -eq 1 ] && echo CLEAN || echo FAIL) ($detail) $((t1 - t0)) s"
  echo "$line" | tee -a "$verdict"
  [ $ok -eq 1 ] || status=1
}

rm -rf /tmp/xb-sanitize-bench-*
for tool in memcheck racecheck; do
  run_one "$tool" kernels "$build/tests/xb_gpu_tests" --gtest_filter="$kernel_filter" --gtest_brief=1
  run_one "$tool" bench "$build/bench" "${bench_args[@]}" --out "/tmp/xb-sanitize-bench-$tool"
done
echo "bench arguments: ${bench_args[*]}" >> "$OUT/sanitize-machine.txt"
echo "h200_sanitize: $([ $status -eq 0 ] && echo "all CLEAN" || echo FAILED); logs and verdict in $OUT"
exit $status
