#!/usr/bin/env bash
# Issue 15 (one measuring core, a public measuring API) on the H200 machine, through the device
# tool, in two calls that share the warm machine's build-h200:
#   bash tools/lab/h200_core.sh core      build, GPU tests, bench --size 64,4096 --warmup (timed),
#                                       bench sweep --size 64:16384:x2
#   bash tools/lab/h200_core.sh user      install, the example (a user's saxpy against the installed
#                                       package) hot and cold, validated; the other commands through
#                                       the core (ab, tune-add, calibrate, cold bench, overhead);
#                                       XB_TORCH_CORPUS=1 also records the PyTorch corpus (issue 16)
# Each writes logs and one results tarball into $OUT (at most 8 files come back), and ends with a
# short table of the acceptance checks.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
what=${1:-core}
h200_workdir "/tmp/xb-core-$what"

h200_machine "$OUT/machine.txt"

phase "build"
if ! h200_build "$OUT/build.log" 40; then
  echo "h200_core: build failed (build.log)"
  exit 1
fi

if [ "$what" = core ]; then
  phase "GPU tests"
  timeout 300 ctest --test-dir build-h200 -L gpu --output-on-failure > "$OUT/gpu_tests.log" 2>&1
  rc=$?
  check "GPU tests (ctest -L gpu)" "exit $rc, $(grep -E 'tests passed' "$OUT/gpu_tests.log" | tail -1)"
  grep -E "^\[  (FAILED|PASSED) " "$OUT/gpu_tests.log" | head -5 >> "$OUT/checks.txt"

  phase "bench --size 64,4096 --warmup"
  s=$(date +%s%N)
  timeout 120 ./build-h200/bench --size 64,4096 --warmup --out "$W/bench" > "$OUT/bench.log" 2>&1
  rc=$?
  e=$(date +%s%N)
  check "bench --size 64,4096 --warmup (exit 0, at most 20 s)" "exit $rc, $(( (e - s) / 1000000 )) ms"

  phase "bench sweep --size 64:16384:x2"
  timeout 420 ./build-h200/bench sweep --size 64:16384:x2 --out "$W/sweep" > "$OUT/sweep.log" 2>&1
  rc=$?
  check "bench sweep --size 64:16384:x2 (exit 0, validation passed)" "exit $rc, $(grep -E '^validation:' "$OUT/sweep.log")"
  tar czf "$OUT/core-results.tar.gz" --exclude='raw_session.json' --exclude='full.json' \
    --exclude='trace_only.json' -C "$W" bench sweep 2>/dev/null
fi

if [ "$what" = user ]; then
  phase "install + example against the installed package"
  prefix=$W/prefix
  { cmake --install build-h200 --prefix "$prefix" &&
    cmake -S examples/benchmark_my_kernel -B "$W/example-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$W/example-build"; } > "$W/example_build.log" 2>&1
  rc=$?
  check "example built against the installed package" "exit $rc"
  # example NAME GREP ARGS...: runs the saxpy with ARGS into saxpy-NAME, validates it with the
  # installed validate, and checks run exit / validate exit / checks "not run".
  example() {
    local name=$1 pattern=$2 rc vrc notrun
    shift 2
    timeout 120 "$W/example-build/saxpy" "$@" --warmup --out "$W/saxpy-$name" > "$W/saxpy_$name.log" 2>&1
    rc=$?
    timeout 60 "$prefix/bin/validate" "$W/saxpy-$name" > "$W/validate-$name.txt" 2>&1
    vrc=$?
    notrun=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['summary']['not_run'])" \
      "$W/saxpy-$name/validation.json" 2>/dev/null)
    check "saxpy (user program) $*: run exit / validate exit / checks not run" "$rc / $vrc / ${notrun:-?}"
    grep -E "$pattern" "$W/validate-$name.txt" | head -3 | tee -a "$OUT/checks.txt"
  }
  example hot "event_vs_cupti" --size 4096,16777216 --mode hot
  example cold "event_vs_cupti" --size 4096,16777216 --mode cold
  # With a counter pass (issue 18 through the public API): at 16M elements the saxpy's 192 MiB are
  # DRAM-bound and far above the L2, so model_vs_counters compares and no check is "not run".
  example counters "model_vs_counters|DRAM bytes" --size 16777216 --counters

  phase "the other commands through the core"
  mkdir -p "$W/cmds"
  if [ "${XB_SKIP_CMDS:-0}" != 1 ]; then
  B=./build-h200/bench
  timeout 60 $B ab --op matmul,addmm_bias1d --size 4096 --out "$W/cmds/ab.json" > "$W/cmds/ab.log" 2>&1
  check "bench ab --op matmul,addmm_bias1d --size 4096" "exit $?, $(grep -E '^B / A: median' "$W/cmds/ab.log")"
  timeout 60 $B ab --op matmul,add --size 256 --launches 300 --rounds 3 --warmup-s 0 > "$W/cmds/ab300.log" 2>&1
  check "bench ab --launches 300 (no blocking kernel)" "exit $?"
  timeout 120 $B tune-add --dtype fp16 --size 64,4096 --launches 20 --passes 3 --out "$W/cmds/tune.json" \
    > "$W/cmds/tune.log" 2>&1
  check "bench tune-add --dtype fp16 --size 64,4096" "exit $?, $(grep -c '(bench)' "$W/cmds/tune.log") bench marks"
  timeout 90 $B calibrate --out "$W/cmds/cal" > "$W/cmds/calibrate.log" 2>&1
  check "bench calibrate" "exit $?"
  timeout 120 $B --op add,matmul --size 4096,8192 --mode cold --out "$W/cmds/cold" > "$W/cmds/cold.log" 2>&1
  check "bench --mode cold (add, matmul at 4096, 8192)" "exit $?, $(grep -E 'validation' "$W/cmds/cold.log" | tail -1)"
  timeout 120 $B overhead --breakdown --out "$W/cmds/overhead.json" > "$W/cmds/overhead.log" 2>&1
  check "bench overhead --breakdown" "exit $?"
  fi
  if [ "${XB_TORCH_CORPUS:-0}" = 1 ]; then
    phase "PyTorch corpus (issue 16)"
    timeout 300 python3 tools/lab/record_torch_corpus.py "$W/torch" > "$OUT/torch_corpus.log" 2>&1
    check "record_torch_corpus.py" "exit $?"
  fi
  tar czf "$OUT/user-results.tar.gz" --exclude='raw_session.json' --exclude='full.json' --exclude='trace_only.json' \
    -C "$W" saxpy-hot saxpy-cold saxpy-counters cmds validate-hot.txt validate-cold.txt validate-counters.txt \
    example_build.log saxpy_hot.log saxpy_cold.log saxpy_counters.log $( [ -d "$W/torch" ] && echo torch) 2>/dev/null
fi
phase "done"
echo
cat "$OUT/checks.txt"
ls -la "$OUT"
