#!/usr/bin/env bash
# How a power-capped GEMM's samples drift over a long run, and how far a T-second median lands from
# the long-run one, on the H200 (through the device tool, from the repository root):
#   bash tools/lab/h200_drift.sh [SECONDS]           (default 30)
# - drift:  matmul and addmm bf16 4096 (the main job's power-capped fixtures), warmed up, each
#           sampled for SECONDS (no stop before: --max-noise 0.0001 %), CUPTI on as in the main
#           job; events.json (every sample, in time order) comes back for the window analysis
#           (tools/lab/drift_windows.py: window medians against the whole run's, and the coverage
#           of the interval the stopping rule computes on each window).
# - malloc: examples/malloc_in_launch built by h200_trust.sh sync (when /tmp/xb-trust has it): the
#           detected and the declared registration each in its own process, alternating, 3 times
#           each, hot mode: run-to-run spread of a launch that allocates.
# $OUT: machine.txt, checks.txt, drift.events.json.gz, drift.log, malloc.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
secs=${1:-30}
h200_workdir /tmp/xb-drift
: > "$OUT/checks.txt"
h200_machine "$OUT/machine.txt"
phase "build"
h200_build_or_exit "$W/build.log" 40
phase "drift: matmul, addmm 4096 for $secs s each"
build-h200/bench --op matmul,addmm --size 4096 --warmup --min-time "$secs" --max-time "$secs" --max-noise 0.0001 \
  --out "$W/drift" > "$OUT/drift.log" 2>&1
check "drift run ($secs s per fixture)" "exit $?"
gzip -9 -c "$W/drift/events.json" > "$OUT/drift.events.json.gz"
nvidia-smi --query-gpu=power.limit,power.draw,clocks.sm,clocks_event_reasons.active --format=csv >> "$OUT/machine.txt" 2>&1
ms=/tmp/xb-trust/ex-malloc_in_launch/malloc_scale
if [ -x "$ms" ]; then
  phase "malloc run to run"
  for i in 1 2 3; do
    for op in scale scale_declared; do
      "$ms" --op $op --warmup --out "$W/malloc-$op-$i" > "$W/malloc-$op-$i.log" 2>&1
      rc=$?
      python3 - "$W/malloc-$op-$i" "$rc" "$i" >> "$OUT/malloc.txt" <<'PY'
import json, sys
d, rc, i = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    for f in json.load(open(d + "/events.json"))["fixtures"]:
        s, t = f["stats"], f["timing"]
        ci = s.get("median_ci", {})
        print("run %s %-28s exit %s sync=%-8s median %10.1f ns +-%.2f%% RSD %.1f%%" % (
            i, f["name"], rc, t.get("sync"), s["median_ns"], 100 * ci.get("half_width", float("nan")), 100 * s["rsd"]))
except Exception as e:
    print("run %s %s: exit %s, no events.json (%s)" % (i, d, rc, e))
PY
    done
  done
  check "malloc_scale hot, detected/declared alternating x3" "$(wc -l < "$OUT/malloc.txt") rows"
fi
phase done
