#!/usr/bin/env bash
# The main job's wall time against its stopping minimums, on the H200 (through the device tool, from
# the repository root):   bash tools/lab/h200_walltime.sh [ROUNDS]      (default 3)
# `bench --size 64,4096 --warmup` with the default --min-time (0.5 s) and with 0.2 s and 0.1 s,
# interleaved round by round in one call (the GPU's power state is shared), so that shortening the
# minimum is decided on figures: per run the wall time, the fixtures converged, the event-vs-CUPTI
# results claimed; per fixture the median of every configuration against the default's (a shorter
# minimum must not move a median beyond its stated interval). The --warmup floor (0.5 s per fixture)
# is not a flag and stays. Uses a bench carried in .xbdev/ (see h200_demo.sh) when there is one, else
# builds build-h200. Written 2026-12-04 without device time: not run yet.
# $OUT: machine.txt, walltime.txt (one line per run), medians.txt, checks.txt, the run folders' summaries.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
rounds=${1:-3}
h200_workdir /tmp/xb-walltime
: > "$OUT/checks.txt"
h200_machine "$OUT/machine.txt"
if [ -x .xbdev/bench ]; then
  export LD_LIBRARY_PATH=$PWD/.xbdev/lib:$LD_LIBRARY_PATH
  bench=.xbdev/bench
  check "bench" "carried (.xbdev/bench)"
else
  phase "build"
  h200_build_or_exit "$W/build.log" 40
  bench=build-h200/bench
  check "build" "ok ($(($(date +%s) - t0)) s)"
fi
for r in $(seq 1 "$rounds"); do
  for mt in 0.5 0.2 0.1; do
    phase "round $r, --min-time $mt"
    run="$W/r$r-mt$mt"
    s=$(date +%s.%N)
    $bench --size 64,4096 --warmup --min-time "$mt" --out "$run" > "$run.log" 2>&1
    rc=$?
    wall=$(python3 -c "import time; print(round(time.time() - $s, 1))")
    echo "round $r min-time $mt: exit $rc, wall $wall s, $(python3 tools/lab/run_claims.py "$run")" >> "$OUT/walltime.txt"
    cp "$run/summary.md" "$OUT/r$r-mt$mt.summary.md" 2>/dev/null
  done
done
# Per fixture: each configuration's median (over rounds) against the default's, with the default's
# interval half-width, from events.json's stats.
python3 - "$W" "$rounds" > "$OUT/medians.txt" <<'PY'
import glob, json, statistics, sys
w, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for mt in ("0.5", "0.2", "0.1"):
    for r in range(1, rounds + 1):
        try:
            for f in json.load(open("%s/r%d-mt%s/events.json" % (w, r, mt)))["fixtures"]:
                st = f.get("stats", {})
                if "median_ns" in st:
                    med.setdefault(f["name"], {}).setdefault(mt, []).append(
                        (st["median_ns"], st.get("median_ci", {}).get("half_width")))
        except (OSError, ValueError, KeyError):
            pass
for name, by in sorted(med.items()):
    base = statistics.median(m for m, _ in by.get("0.5", [])) if by.get("0.5") else None
    cells = []
    for mt in ("0.5", "0.2", "0.1"):
        if not by.get(mt):
            cells.append("%s: -" % mt)
            continue
        m = statistics.median(x for x, _ in by[mt])
        hw = [h for _, h in by[mt] if h is not None]
        rel = "" if not base else " (%+.2f%% of 0.5's)" % (100 * (m / base - 1))
        cells.append("%s: %.0f ns +-%.2f%%%s" % (mt, m, 100 * max(hw) if hw else float("nan"), rel))
    print("%-26s %s" % (name, " | ".join(cells)))
PY
check "rounds" "$rounds x 3 configurations: walltime.txt, medians.txt"
phase done
