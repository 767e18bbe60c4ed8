#!/usr/bin/env bash
# Builds the CPU code and the CPU tests with AddressSanitizer and UndefinedBehaviorSanitizer
# (CMake option CROSSBENCH_SANITIZE; CUDA sources are not instrumented) and runs the CPU test
# binary xb_tests under them (the device-free tests of kernels/ included: tests/cpu/test_kernels_host.cpp;
# xb_gpu_tests is not built here, so the sanitizer build stays within the test command's time). The bench and validate
# executables that xb_tests runs are the instrumented ones too.
#
# Usage: scripts/sanitize.sh [--gtest_* flags for xb_tests]
# XB_SANITIZE=0 skips it (exit 77). Build folder: $XB_ASAN_BUILD_DIR (default build-asan); jobs: $XB_JOBS (default nproc).
# Every sanitizer report, from the tests or from a bench/validate they start, is written to
# <build folder>/sanitizer-logs/ and fails the run, even where the test itself passed. xb_tests runs
# as $XB_JOBS shards in parallel (gtest sharding); their output is <build folder>/sanitize-xb_tests.log.
# Exit: 0 clean, 1 a test failed or a sanitizer reported, 77 the compiler cannot build with
# -fsanitize=address,undefined (ctest: skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${XB_SANITIZE:-1}" = 0 ]; then echo "sanitize: SKIP: XB_SANITIZE=0"; exit 77; fi
build=${XB_ASAN_BUILD_DIR:-build-asan}
jobs=${XB_JOBS:-$(nproc)}
start=$(date +%s)

cxx=${CXX:-c++}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int main() { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "sanitize: SKIP: $cxx cannot link -fsanitize=address,undefined (libasan/libubsan missing)"; exit 77
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  gen=(); command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  # Debug: assertions on; CROSSBENCH_SANITIZE adds -Og -g1 (CMakeLists.txt says why).
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug -DCROSSBENCH_SANITIZE=ON >/dev/null
fi
echo "sanitize: building xb_tests, bench and validate in $build (-j $jobs)"
cmake --build "$build" -j "$jobs" --target xb_tests > "$build/sanitize-build.log" 2>&1 || {
  tail -40 "$build/sanitize-build.log"; echo "sanitize: build FAILED (log $build/sanitize-build.log)"; exit 1; }
built=$(date +%s)

logs="$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
logs_abs=$(cd "$logs" && pwd)
# protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be (a GPU
# machine fails every cudaMalloc without it). Leaks are reported (LeakSanitizer) and fail too.
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:log_path=$logs_abs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs_abs/ubsan"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"

status=0
# xb_tests in $jobs processes, each a fixed part of the test list (gtest's own sharding,
# GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX: test i goes to shard i mod N, the same on every run), so
# the instrumented run uses every core at the end of the test command, when it is often the last
# test left. The tests already run in parallel processes under ctest -j in the main build.
shards=$jobs
[ "$shards" -ge 1 ] 2>/dev/null || shards=1
echo "sanitize: xb_tests ($shards shards)"
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$build/tests/xb_tests" --gtest_brief=1 "$@" \
    > "$build/sanitize-xb_tests.$i.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}" || status=1
done
for ((i = 0; i < shards; i++)); do
  cat "$build/sanitize-xb_tests.$i.log"
  rm -f "$build/sanitize-xb_tests.$i.log"
done > "$build/sanitize-xb_tests.log"
grep -E "^\[(==========|  PASSED  |  FAILED  )\]" "$build/sanitize-xb_tests.log" || tail -5 "$build/sanitize-xb_tests.log"

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  echo "sanitize: sanitizer reports:"
  for f in $reports; do echo "== $f"; head -60 "$f"; done
  status=1
fi
if [ $status -ne 0 ]; then
  echo "sanitize: FAILED (logs: $build/sanitize-xb_tests.log, $logs)"
fi
end=$(date +%s)
echo "sanitize: $( [ $status -eq 0 ] && echo clean || echo FAILED ): build $((built - start)) s, tests $((end - built)) s"
exit $status
