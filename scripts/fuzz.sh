#!/usr/bin/env bash
# Builds the libFuzzer targets of the readers (tests/fuzz/fuzz_<name>.cpp: every file there is a
# target) with clang, address and undefined-behaviour sanitizers, and runs each for a bounded time
# on a copy of its committed seed corpus (tests/fuzz/corpus/<name>) with the JSON dictionary
# (tests/fuzz/json.dict).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
#   time per target: the argument, else $XB_FUZZ_TOTAL_SECONDS shared equally among the targets
#   (at least 10 s each), else $XB_FUZZ_SECONDS, else 60.
#   $XB_FUZZ_TARGETS: names to run (default all, e.g. "raw_session events").
#   $XB_FUZZ_TIMEOUT: seconds one input may take before libFuzzer calls it a hang (default 60:
#   generous for a loaded 2-core machine, where inputs of at most 16 KB take milliseconds).
# Build folder: $XB_FUZZ_BUILD_DIR (default build-fuzz). A crash leaves its reproducer in
# <build folder>/crashes/ (run: <build folder>/fuzz_<name> <file>).
# Exit: 0 no target crashed, 1 one did, 77 clang or libFuzzer is not available (ctest: skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=${XB_FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.cpp; do f=${f##*/fuzz_}; echo "${f%.cpp}"; done)}
ntargets=$(echo $targets | wc -w)
if [ -n "${1:-}" ]; then seconds=$1
elif [ -n "${XB_FUZZ_TOTAL_SECONDS:-}" ]; then seconds=$(( XB_FUZZ_TOTAL_SECONDS / ntargets )); [ "$seconds" -lt 10 ] && seconds=10
else seconds=${XB_FUZZ_SECONDS:-60}; fi
timeout=${XB_FUZZ_TIMEOUT:-60}
build=${XB_FUZZ_BUILD_DIR:-build-fuzz}
cxx=${XB_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
if [ -z "$cxx" ]; then echo "fuzz: SKIP: no clang++ (libFuzzer needs clang)"; exit 77; fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz: SKIP: $cxx cannot link -fsanitize=fuzzer (libFuzzer runtime missing)"; exit 77
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  gen=(); command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S tests/fuzz -B "$build" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "${XB_JOBS:-$(nproc)}" >/dev/null
mkdir -p "$build/crashes"
status=0
for target in $targets; do
  work="$build/corpus-$target"
  mkdir -p "$work"
  echo "fuzz: fuzz_$target for ${seconds}s"
  if ! "$build/fuzz_$target" "$work" "tests/fuzz/corpus/$target" -dict=tests/fuzz/json.dict \
      -max_total_time="$seconds" -max_len=16384 -timeout="$timeout" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/crashes/$target-" > "$build/fuzz_$target.log" 2>&1; then
    echo "fuzz: fuzz_$target FAILED; log $build/fuzz_$target.log, reproducer in $build/crashes/"
    tail -40 "$build/fuzz_$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz_$target.log" | sed "s/^/fuzz: fuzz_$target /"
  fi
done
exit $status
