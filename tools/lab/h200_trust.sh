#!/usr/bin/env bash
# Evidence for "trust that generalizes" on the H200 (run through the device tool, from the
# repository root):   bash tools/lab/h200_trust.sh [PART...]      parts: main sync qualify small
#                                                                  holdout sweep gpu (default: all
#                                                                  but sweep and gpu)
# - main:    `bench --size 64,4096 --warmup`, its wall time, every event-vs-CUPTI result claimed?
#            (the fixtures' median intervals and noise causes in summary.md)
# - sync:    the user-style benchmarks of examples/cublas_legacy_sgemm and
#            examples/malloc_in_launch, built against the installed package, in hot and cold mode,
#            detected and declared (.sync()), each folder validated; --graph refuses them
# - qualify: the release gate (results/suites/h200-gate.json) against results/baselines/h200.json
# - small:   re-records results/sessions/h200-small (the README's command)
# - holdout: the PyTorch profile matrix's holdout batch (tools/lab/torch_matrix/record.py --batch
#            holdout), recorded after the validator's code was written
# - sweep:   `bench sweep --size 64:16384:x2` validated
# - gpu:     ctest -L gpu
# Everything small lands in $OUT/trust.tgz, the holdout in $OUT/holdout.tgz, one line per step in
# $OUT/checks.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
parts=${*:-main sync qualify small holdout}
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
h200_workdir /tmp/xb-trust
: > "$OUT/checks.txt"
h200_machine "$W/machine.txt"
phase "build"
h200_build_or_exit "$W/build.log" 40
B=build-h200
check "build" "ok ($(( $(date +%s) - t0 )) s)"
nvidia-smi --query-gpu=power.limit,power.draw,clocks.sm,clocks_event_reasons.active --format=csv > "$W/power.txt" 2>&1

if has main; then
  # MAIN_RUNS=N: the main job N times (main, main-2, ...), for its run-to-run spread.
  for i in $(seq 1 "${MAIN_RUNS:-1}"); do
    phase "main job ($i)"
    d=main
    [ "$i" -gt 1 ] && d=main-$i
    s=$(date +%s.%N)
    $B/bench --size 64,4096 --warmup --out "$W/$d" > "$W/$d.log" 2>&1
    rc=$?
    wall=$(python3 -c "import time; print(round(time.time() - $s, 1))")
    claimed=$(python3 tools/lab/run_claims.py "$W/$d")
    check "bench --size 64,4096 --warmup ($d)" "exit $rc, wall $wall s, event-vs-CUPTI $claimed"
  done
fi

if has sync; then
  phase "user benchmarks that synchronize"
  cmake --install $B --prefix "$W/prefix" > "$W/install.log" 2>&1
  for ex in cublas_legacy_sgemm malloc_in_launch; do
    cmake -S examples/$ex -B "$W/ex-$ex" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$W/prefix" \
      > "$W/ex-$ex.log" 2>&1 && cmake --build "$W/ex-$ex" >> "$W/ex-$ex.log" 2>&1
    check "build examples/$ex against the installed package" "exit $?"
  done
  for m in hot cold; do
    "$W/ex-cublas_legacy_sgemm/sgemm" --mode $m --warmup --out "$W/sync/sgemm-$m" > "$W/sgemm-$m.log" 2>&1
    check "sgemm (cublasSetStream + cublasSgemm, 512 and 4096, detected and declared) --mode $m" "exit $?"
    "$W/ex-malloc_in_launch/malloc_scale" --mode $m --warmup --out "$W/sync/malloc-$m" > "$W/malloc-$m.log" 2>&1
    check "malloc_scale (cudaMalloc/cudaFree in launch) --mode $m" "exit $?"
  done
  for d in "$W"/sync/*; do
    $B/validate "$d" --report "$d.validation.json" > "$d.validate.txt" 2>&1
    check "validate $(basename "$d")" "exit $?: $(head -1 "$d.validate.txt" | cut -c1-90)"
  done
  "$W/ex-cublas_legacy_sgemm/sgemm" --op sgemm_declared --graph --out "$W/sync/g1" > "$W/graph1.log" 2>&1
  check "sgemm_declared --graph (expect 2, one line, no folder)" "exit $?, $(wc -l < "$W/graph1.log") line(s), folder $([ -e "$W/sync/g1" ] && echo present || echo absent)"
  "$W/ex-cublas_legacy_sgemm/sgemm" --op sgemm --size 512 --graph --out "$W/sync/g2" > "$W/graph2.log" 2>&1
  check "sgemm (detected) --graph" "exit $?: $(grep -m1 -i 'graph' "$W/graph2.log" | cut -c1-100)"
  python3 - "$W/sync" > "$W/sync_table.txt" <<'PY'
import glob, json, os, sys
rows = {}
for d in sorted(glob.glob(os.path.join(sys.argv[1], "*-*"))):
    if not os.path.isdir(d) or not os.path.exists(d + "/events.json"):
        continue
    for f in json.load(open(d + "/events.json"))["fixtures"]:
        t, s = f["timing"], f["stats"]
        ci = s.get("median_ci") or {}
        print("%-12s %-28s sync=%-9s declared=%-5s found_after=%-5s blocking=%-5s median %10.1f ns  CI %s..%s  RSD %.2f%%" % (
            os.path.basename(d), f["name"], t.get("sync"), t.get("sync_declared", False), t.get("sync_found_after", 0),
            t.get("blocking"), s["median_ns"], ci.get("low_ns", "?"), ci.get("high_ns", "?"), 100 * s.get("rsd", 0)))
PY
  cat "$W/sync_table.txt"
fi

if has qualify; then
  phase "qualify gate"
  $B/bench qualify --suite results/suites/h200-gate.json --baseline results/baselines/h200.json --out "$W/qualify" \
    > "$W/qualify.log" 2>&1
  check "bench qualify h200-gate vs the stored baseline" "exit $?"
fi

if has small; then
  phase "h200-small"
  $B/bench --size 64,256 --wait-steps 1 --warmup-steps 1 --active-steps 3 --min-time 0.05 --max-time 0.5 --batch 8 \
    --out "$W/h200-small" > "$W/h200-small.log" 2>&1
  check "re-record h200-small" "exit $?: $(grep -m1 -E '^(PASSED|FAILED)' "$W/h200-small.log" | cut -c1-90)"
fi

if has holdout; then
  phase "holdout"
  # TORCH_BATCH: record.py's batch (default holdout; fresh37 is issue 37's fresh batch),
  # TORCH_BUDGET_S: its time budget (default 300 s).
  PYTHONUNBUFFERED=1 timeout $(( ${TORCH_BUDGET_S:-300} + 100 )) python3 tools/lab/torch_matrix/record.py "$W/holdout" \
    --batch "${TORCH_BATCH:-holdout}" --budget-s "${TORCH_BUDGET_S:-300}" > "$W/holdout.log" 2>&1
  check "torch matrix batch ${TORCH_BATCH:-holdout}" "exit $?: $(tail -1 "$W/holdout.log")"
  (cd "$W/holdout" && for f in *.json; do case $f in *.meta.json|summary.json) ;; *) gzip -9 "$f" ;; esac; done)
  tar -C "$W" -czf "$OUT/holdout.tgz" holdout holdout.log
fi

if has sweep; then
  phase "sweep"
  $B/bench sweep --size 64:16384:x2 --out "$W/sweep" > "$W/sweep.log" 2>&1
  check "bench sweep --size 64:16384:x2" "exit $?"
fi

if has gpu; then
  phase "GPU tests"
  ctest --test-dir $B -L gpu --output-on-failure > "$W/ctest_gpu.log" 2>&1
  check "ctest -L gpu" "exit $?: $(grep -E 'tests passed|tests failed' "$W/ctest_gpu.log" | tail -1)"
fi

phase "pack"
cp "$OUT/checks.txt" "$W/checks.txt"
# traces and raw sessions stay out (large); the h200-small session is kept whole
tar -C "$W" --exclude='full.json' --exclude='trace_only.json' --exclude='build*.log' --exclude='prefix' \
  --exclude='ex-*' --exclude='holdout' --exclude='raw_session.json' -czf "$OUT/trust.tgz" . 2>/dev/null
[ -f "$W/h200-small/raw_session.json" ] && cp "$W/h200-small/raw_session.json" "$OUT/h200-small.raw_session.json"
ls -la "$OUT"
cat "$OUT/checks.txt"
