#!/usr/bin/env bash
# Issue 38's "behaviour unchanged, checked on the H200 once": the main job, a sweep, a
# qualification and a replay by the code before the refactor (f79ea95, carried as a source archive)
# and by this checkout, interleaved on one GPU, and their files compared wherever timing does not
# enter (tools/lab/compare_run_shapes.py). From the repository root, through the device tool, with
# the archive carried (carry [".old"]):
#   mkdir -p .old && git archive --format=tar.gz -o .old/f79ea95.tgz f79ea95 -- . ':!results' ':!tests/data'
#   bash tools/lab/h200_refactor_check.sh
# (.old/ is git-excluded like .whl/; the archive leaves out results/ and tests/data, which the
# build does not need.) Runs, old then new then old then new where the order could matter:
#   main:    bench --size 64,4096 --warmup
#   sweep:   bench sweep --size 64:1024:x4 --op add,matmul --ceilings <a committed ceilings.json>
#   qualify: bench qualify --suite results/suites/smoke.json --baseline <one written by the old build>
#   replay:  bench --replay results/sessions/h200-small/raw_session.json
# $OUT: checks.txt (one line per kind: the number of differences), shapes-<kind>.json (each
# difference), console.txt, machine.txt. About 6 minutes, both builds included.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-refactor old new
: > "$OUT/checks.txt"
h200_machine "$OUT/machine.txt"
archive=$(ls .old/*.tgz 2> /dev/null | head -1)
if [ -z "$archive" ]; then
  check "source archive of the old code in .old/" "MISSING (see the header of this script)"
  exit 1
fi

phase "build (new, then old from $archive)"
h200_build_or_exit "$W/build-new.log" 40
mkdir -p "$W/src-old" && tar -xzf "$archive" -C "$W/src-old"
if ! { cmake -S "$W/src-old" -B "$W/src-old/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$W/build-old.log" 2>&1 &&
  cmake --build "$W/src-old/build" -j 16 --target bench validate >> "$W/build-old.log" 2>&1; }; then
  tail -30 "$W/build-old.log"
  cp "$W/build-old.log" "$OUT/"
  check "build of the old code" "FAILED"
  exit 1
fi
check "builds (new and old)" "$(( $(date +%s) - t0 )) s"
declare -A exe=([old]="$W/src-old/build/bench" [new]="build-h200/bench")
ceilings=results/h200/final-2026-12-01/sweep/ceilings.json

run() {  # run SIDE KIND ARGS...: one command of one build, its console appended to console.txt
  local side=$1 kind=$2
  shift 2
  phase "$side $kind"
  { echo "== $side $kind: $*"; "${exe[$side]}" "$@"; echo "exit $?"; } >> "$OUT/console.txt" 2>&1
}
for side in old new; do run "$side" main --size 64,4096 --warmup --out "$W/$side/main"; done
for side in new old; do
  run "$side" sweep sweep --size 64:1024:x4 --op add,matmul --ceilings "$ceilings" --out "$W/$side/sweep"
done
run old baseline qualify --suite results/suites/smoke.json --baseline "$W/baseline.json" --update-baseline \
  --out "$W/old/baseline-run"
for side in old new; do
  run "$side" qualify qualify --suite results/suites/smoke.json --baseline "$W/baseline.json" --out "$W/$side/qualify"
  run "$side" replay --replay results/sessions/h200-small/raw_session.json --out "$W/$side/replay"
done

phase "compare"
for kind in main sweep qualify replay; do
  python3 tools/lab/compare_run_shapes.py "$W/old/$kind" "$W/new/$kind" --report "$OUT/shapes-$kind.json" \
    > "$W/shapes-$kind.txt" 2>&1
  check "$kind: files of f79ea95 vs this checkout, where timing does not enter" "$(tail -1 "$W/shapes-$kind.txt" | sed 's/.*: //')"
done
phase "done"
