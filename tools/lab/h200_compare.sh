#!/usr/bin/env bash
# Issue 39's evidence on the H200 machine, through the device tool (from the repository root):
#   bash tools/lab/h200_compare.sh
# 1. builds build-h200 (bench, validate, crossbench._core) through scripts/setup.sh;
# 2. records three runs of the main job in one session, interleaved so that drift spreads over
#    them: A (`bench --size 64,4096 --warmup`), C (the same with `--slow-fixture add/bf16/4096=2`:
#    a known 2 us per call), B (the same as A, same commit);
# 3. `bench compare A B` (expected: SAME everywhere, or AMBIGUOUS where the power cap moved a GEMM,
#    saying so) and `bench compare A C` (expected: SLOWER for add/bf16/4096 alone, with the injected
#    shift, 2 us over A's median, inside its interval), then `python -m crossbench compare A C`
#    (the same verdicts through the Python package, and its pictures);
# 4. the pictures: compare.png and samples-*.png of each comparison, samples.png of run A, with the
#    per-sample SM clocks where the runs recorded them (timing.sample_sm_clock_mhz).
# $OUT: checks.txt (one line per acceptance check), machine.txt, compare-AB/ and compare-AC/
# (compare.md, compare.json, the PNGs), runs.tgz (the three run folders without their traces),
# console.txt. About 4 minutes.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-compare
: > "$OUT/checks.txt"
h200_machine "$OUT/machine.txt"

phase "build"
h200_build_with_python "$W/build.log"

run() {  # run NAME ARGS...: one run of the main job into $W/NAME, its console into console.txt
  local name=$1
  shift
  phase "run $name"
  { echo "== $name: bench --size 64,4096 --warmup $*"; build-h200/bench --size 64,4096 --warmup --out "$W/$name" "$@"; echo "exit $?"; } \
    >> "$OUT/console.txt" 2>&1
}
run A
run C --slow-fixture add/bf16/4096=2
run B

phase "compare"
for pair in AB AC; do
  a=${pair:0:1} b=${pair:1:1}
  { echo "== bench compare $a $b"; build-h200/bench compare "$W/$a" "$W/$b" --out "$OUT/compare-$pair"; echo "exit $?"; } \
    >> "$OUT/console.txt" 2>&1
  python3 scripts/plot_compare.py "$OUT/compare-$pair" >> "$OUT/console.txt" 2>&1
done
{ echo "== python -m crossbench compare A C"; PYTHONPATH=build-h200/python python3 -m crossbench compare "$W/A" "$W/C" \
  --out "$W/py-AC"; echo "exit $?"; } >> "$OUT/console.txt" 2>&1
python3 scripts/plot_compare.py --samples "$W/A" >> "$OUT/console.txt" 2>&1 && cp "$W/A/samples.png" "$OUT/samples-A.png"

phase "checks"
python3 - "$OUT" "$W" <<'EOF' | tee -a "$OUT/checks.txt"
import json, os, sys
out, w = sys.argv[1], sys.argv[2]
def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e)}
def line(name, ok, detail):
    print("%-72s %s" % (name, ("PASS " if ok else "FAIL ") + detail))
ab, ac = load(os.path.join(out, "compare-AB", "compare.json")), load(os.path.join(out, "compare-AC", "compare.json"))
if "error" in ab or "error" in ac:
    line("compare.json written", False, ab.get("error", "") + " " + ac.get("error", ""))
    sys.exit(0)
line("A vs B claimed (both runs validated)", ab["claimed"], str(ab.get("not_claimed_because", "")))
verdicts = {f["key"]: f["verdict"] for f in ab["fixtures"]}
bad = {k: v for k, v in verdicts.items() if v not in ("SAME", "AMBIGUOUS")}
line("A vs B: every fixture SAME or AMBIGUOUS", not bad, json.dumps(verdicts))
amb = [f for f in ab["fixtures"] if f["verdict"] == "AMBIGUOUS"]
line("A vs B: each AMBIGUOUS says why", all(f["reason"] for f in amb), "; ".join(f["key"] + ": " + f["reason"] for f in amb))
slow = {f["key"]: f for f in ac["fixtures"]}
target = "add/bf16/4096 (hot)"
others = [k for k, f in slow.items() if k != target and f["verdict"] in ("SLOWER", "FASTER")]
t = slow.get(target)
line("A vs C: add/bf16/4096 SLOWER", t is not None and t["verdict"] == "SLOWER", t["reason"] if t else "missing")
line("A vs C: no other fixture SLOWER or FASTER", not others, ", ".join(others))
if t:
    expected = 100.0 * 2000.0 / t["median_a_ns"]
    line("A vs C: the injected shift (2 us) inside the interval", t["low_pct"] <= expected <= t["high_pct"],
         "expected +%.2f%%, shift %+.2f%% in [%+.2f%%, %+.2f%%]" % (expected, t["shift_pct"], t["low_pct"], t["high_pct"]))
clocks = [f.get("clock_source", "") for f in ab["fixtures"]]
line("per-sample SM clocks used (timing.sample_sm_clock_mhz)", any("sample" in c for c in clocks), ", ".join(sorted(set(clocks))))
pngs = [p for p in ("compare-AB/compare.png", "compare-AC/compare.png", "samples-A.png") if os.path.exists(os.path.join(out, p))]
line("pictures written", len(pngs) == 3, ", ".join(pngs))
EOF

phase "pack"
tar -czf "$OUT/runs.tgz" -C "$W" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' A B C py-AC \
  2> /dev/null
phase "done"
