#!/usr/bin/env bash
# Builds the libFuzzer targets of the readers (tests/fuzz/fuzz_<name>.cpp: every file there is a
# target) with clang, address and undefined-behaviour sanitizers, and runs them in one of two modes.
#
# Gate mode (default; what ctest fuzz_readers runs): deterministic, so a green or red run does not
# depend on luck. For each target:
#   1. replay: every file of the committed corpus tests/fuzz/corpus/<name>/ once (-runs=0 on the
#      folder). Reproducers of past findings live there (regress-*), so they are re-checked here,
#      and, without clang, by the gtest FuzzCorpus.* in tests/cpu/test_fuzz_regressions.cpp
#      (under ASan + UBSan in scripts/sanitize.sh).
#   2. fuzz: a fixed number of executions (-runs=N) with a fixed seed (-seed), one process, starting
#      from a fresh temporary copy of the committed corpus (thrown away after), with the JSON
#      dictionary tests/fuzz/json.dict, address-space randomisation off (setarch -R; see below).
#      The same binary does the same thing on every run.
#   N per target (XB_FUZZ_RUNS_<name>, e.g. XB_FUZZ_RUNS_trace=50000, overrides one) was chosen
#   from the rates measured on the 2-core development machine (clang 14, -O1, ASan+UBSan, from
#   the committed corpus), which was shared with other engineers' builds (load average 6 to 8):
#      target        runs    seconds (replay included)   exec/s
#      ceilings     220000    18  18  39  31              ~6000-12000
#      events       170000    19  22  41  40              ~4000-9000
#      raw_session   50000    13  16  33  32              ~1500-3800
#      table        220000    19  24  46  44              ~5000-11000
#      trace        150000    26  60  68  58              ~2200-5800
#   whole gate: 96 s and 141 s (load 6-7), 230 s under ctest and 207 s from a shell (load 8),
#   once the fuzz build exists (its first build takes a few minutes more); about 150 s on
#   average. The last two runs, in different environments, executed the same units, added the
#   same units and reached the same coverage and corpus for every target. Under load, or under
#   ctest -j beside the other tests, it takes longer, but runs exactly the same inputs.
#   $XB_FUZZ_SEED: the seed of every target (default 1); changing it explores other inputs,
#   still reproducibly.
#
# Open mode (scripts/fuzz.sh --open [SECONDS_PER_TARGET]): open-ended fuzzing outside the gate,
# for longer runs: time-bounded, a random seed (printed), a persistent work corpus
# (<build folder>/corpus-<name>, grows from run to run), crashes kept in <build folder>/crashes/.
#   time per target: the argument, else $XB_FUZZ_TOTAL_SECONDS shared equally among the targets
#   (at least 10 s each), else $XB_FUZZ_SECONDS, else 60. A bare SECONDS (the old usage:
#   scripts/fuzz.sh 60) means --open SECONDS.
# FINDINGS GO INTO THE CORPUS: a crash file is copied into tests/fuzz/corpus/<name>/ under a
# name saying what it found (regress-<what>.json), committed with its fix; from then on the gate
# replays it on every run (the script prints the command).
#
# Both modes:
#   $XB_FUZZ_TARGETS: names to run (default all, e.g. "raw_session events").
#   $XB_FUZZ_TIMEOUT: seconds one input may take before libFuzzer calls it a hang (default 60:
#   generous for a loaded 2-core machine, where inputs of at most 16 KB take milliseconds).
#   Build folder: $XB_FUZZ_BUILD_DIR (default build-fuzz); logs <build folder>/fuzz_<name>.log.
#   A crash leaves its reproducer in <build folder>/crashes/ (run: <build folder>/fuzz_<name> <file>).
# Exit: 0 no target crashed, 1 one did, 2 usage, 77 clang or libFuzzer is not available (ctest: skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=gate
if [ "${1:-}" = "--open" ]; then mode=open; shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  mode=open; echo "fuzz: note: a bare SECONDS (the old usage) means --open $1: open-ended, not the gate"
elif [ -n "${1:-}" ]; then echo "usage: scripts/fuzz.sh [--open [SECONDS_PER_TARGET]]" >&2; exit 2; fi
targets=${XB_FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.cpp; do f=${f##*/fuzz_}; echo "${f%.cpp}"; done)}
ntargets=$(echo $targets | wc -w)
timeout=${XB_FUZZ_TIMEOUT:-60}
build=${XB_FUZZ_BUILD_DIR:-build-fuzz}
seed=${XB_FUZZ_SEED:-1}
# Gate mode: executions per target (see the table above); a target not listed gets the default.
runs_for() {
  local override="XB_FUZZ_RUNS_$1"
  if [ -n "${!override:-}" ]; then echo "${!override}"; return; fi
  case $1 in
    trace) echo 150000 ;;
    table) echo 220000 ;;
    events) echo 170000 ;;
    ceilings) echo 220000 ;;
    raw_session) echo 50000 ;;
    *) echo 20000 ;;
  esac
}
if [ "$mode" = open ]; then
  if [ -n "${1:-}" ]; then seconds=$1
  elif [ -n "${XB_FUZZ_TOTAL_SECONDS:-}" ]; then seconds=$(( XB_FUZZ_TOTAL_SECONDS / ntargets )); [ "$seconds" -lt 10 ] && seconds=10
  else seconds=${XB_FUZZ_SECONDS:-60}; fi
fi

cxx=${XB_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
if [ -z "$cxx" ]; then echo "fuzz: SKIP: no clang++ (libFuzzer needs clang)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' > "$tmp/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address "$tmp/p.cpp" -o "$tmp/p" >/dev/null 2>&1; then
  echo "fuzz: SKIP: $cxx cannot link -fsanitize=fuzzer (libFuzzer runtime missing)"; exit 77
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  gen=(); command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S tests/fuzz -B "$build" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if ! cmake --build "$build" -j "${XB_JOBS:-$(nproc)}" > "$build/build.log" 2>&1; then
  grep -E "error|undefined reference" "$build/build.log" | head -5 >&2
  echo "fuzz: error: building the fuzz targets failed ($build/build.log)" >&2
  exit 1
fi
mkdir -p "$build/crashes"
common=(-timeout="$timeout" -rss_limit_mb=2048)

# How to keep a finding: the printed command copies it into the committed corpus.
hint() {  # target, log
  local f
  f=$(grep -oE "Test unit written to [^ ]+" "$2" | tail -1 | sed 's/^Test unit written to //') || true
  [ -n "$f" ] || f="$build/crashes/<file>"
  echo "fuzz: reproduce:  $build/fuzz_$1 $f"
  echo "fuzz: once fixed, keep it as a regression input (the gate and the FuzzCorpus gtest replay it):"
  echo "fuzz:   cp $f tests/fuzz/corpus/$1/regress-<what-it-found>.json && git add tests/fuzz/corpus/$1/"
}

# The fuzzing step runs with fixed addresses: libFuzzer learns from the values its inputs are
# compared with (-use_cmp), and the readers compare pointers, so the same seed mutates differently
# when addresses move (measured: same units executed, different coverage and corpus). So
# address-space randomisation is off (setarch -R), and what lies on the initial stack is the same
# on every run, in any checkout or shell: an empty environment but for a fixed PATH, and only
# fixed-length arguments, run from inside the temporary folder (./fuzz_<name> a link to the binary,
# the corpus copy, the dictionary and the crash folder there; crashes are moved to <build>/crashes).
norandom=(env)
if [ "$mode" = gate ]; then
  if setarch "$(uname -m)" -R true >/dev/null 2>&1; then norandom=(setarch "$(uname -m)" -R)
  else echo "fuzz: note: setarch -R is not permitted here; with ASLR on, runs with one seed may differ in coverage"; fi
  fixed_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin)
  cp tests/fuzz/json.dict "$tmp/json.dict"
  mkdir -p "$tmp/crashes"
fi
status=0
start_all=$(date +%s)
for target in $targets; do
  bin="$build/fuzz_$target"
  corpus="tests/fuzz/corpus/$target"
  log="$build/fuzz_$target.log"
  artifacts="-artifact_prefix=$build/crashes/$target-"
  if [ "$mode" = gate ]; then
    runs=$(runs_for "$target")
    t0=$(date +%s)
    # 1. Replay the committed corpus (whole files: no -max_len, so none is cut).
    if ! "$bin" -runs=0 "${common[@]}" "$artifacts" "$corpus" > "$build/replay_$target.log" 2>&1; then
      echo "fuzz: fuzz_$target FAILED replaying $corpus; log $build/replay_$target.log"
      tail -40 "$build/replay_$target.log"
      hint "$target" "$build/replay_$target.log"
      status=1
      continue
    fi
    nseeds=$(ls "$corpus" | wc -l)
    # 2. Fixed seed, fixed number of executions, fresh copy of the committed corpus (copied in
    # name order), one process, no re-reading of the corpus folder while running.
    work="$tmp/corpus-$target"
    mkdir -p "$work"
    (cd "$corpus" && ls | LC_ALL=C sort | while IFS= read -r f; do cp -- "$f" "$work/$f"; done)
    ln -sf "$(cd "$build" && pwd)/fuzz_$target" "$tmp/fuzz_$target"
    echo "fuzz: fuzz_$target: replayed $nseeds corpus files; fuzzing -seed=$seed -runs=$runs"
    if ! (cd "$tmp" && "${fixed_env[@]}" "${norandom[@]}" "./fuzz_$target" "corpus-$target" -seed="$seed" -runs="$runs" \
        -reload=0 -dict=json.dict -max_len=16384 "${common[@]}" -artifact_prefix="crashes/$target-" -print_final_stats=1) \
        > "$log" 2>&1; then
      mv "$tmp/crashes/"* "$build/crashes/" 2>/dev/null || true
      sed -i "s|Test unit written to crashes/|Test unit written to $build/crashes/|" "$log"
      echo "fuzz: fuzz_$target FAILED (seed $seed, $runs runs); log $log, reproducer in $build/crashes/"
      tail -40 "$log"
      hint "$target" "$log"
      status=1
    else
      # What must be the same on every run of one binary: units executed, units added, coverage.
      echo "fuzz: fuzz_$target: $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$') units," \
        "$(grep -oE 'stat::new_units_added: *[0-9]+' "$log" | grep -oE '[0-9]+$') added," \
        "$(grep -E 'DONE' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*')," \
        "$(( $(date +%s) - t0 )) s"
    fi
    rm -rf "$work"
  else
    work="$build/corpus-$target"
    mkdir -p "$work"
    echo "fuzz: fuzz_$target for ${seconds}s (random seed, work corpus $work)"
    if ! "$bin" "$work" "$corpus" -dict=tests/fuzz/json.dict -max_total_time="$seconds" -max_len=16384 \
        "${common[@]}" "$artifacts" -print_final_stats=1 > "$log" 2>&1; then
      echo "fuzz: fuzz_$target FAILED ($(grep -m1 -oE 'Seed: [0-9]+' "$log" || echo 'seed unknown')); log $log, reproducer in $build/crashes/"
      tail -40 "$log"
      hint "$target" "$log"
      status=1
    else
      grep -m1 -oE "Seed: [0-9]+" "$log" | sed "s/^/fuzz: fuzz_$target /" || true
      grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/fuzz: fuzz_$target /"
    fi
  fi
done
echo "fuzz: $mode mode, $(( $(date +%s) - start_all )) s for:" $targets
if [ "$mode" = open ]; then
  echo "fuzz: findings go into the corpus: copy a crash file from $build/crashes/ into" \
    "tests/fuzz/corpus/<name>/regress-<what>.json and commit it with its fix"
fi
exit $status
