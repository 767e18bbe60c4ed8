#!/usr/bin/env bash
# Issue 18 (hardware counters as a third witness) on the H200 machine, through the device tool:
#   bash scripts/h200_counters.sh
# Builds build-h200; says whether GPU performance counters are open to this user; runs the counter
# GPU tests (every CUPTI call's result and each metric accepted or rejected are logged); a sweep of
# add and matmul bf16 at 64,1024,2048,4096,8192,16384 with --counters (modeled vs counted bytes and
# FLOPs, the roofline with measured points); then add bf16 4096,8192,16384 and matmul bf16
# 2048,4096,8192 under Nsight Compute and a comparison of crossbench's counters with ncu's (bytes
# and tensor FLOPs within 2%). The counter pass measures the steady state of back-to-back calls:
# per fixture K (16) calls profiled after K warm-up calls (docs/metrics.md, "Hardware counters");
# ncu profiles every kernel of the same 2K back-to-back calls with --cache-control none
# --clock-control none, and the comparison averages the last K calls' kernels. SASS FLOPs that
# CUPTI does not count on this GPU (GH100 offers no per-opcode SASS metric) are reported as "not
# counted by CUPTI on this GPU", not as a disagreement. $OUT: checks.txt, counters_vs_ncu.txt,
# counters_log.txt, roofline.png (when matplotlib is there), counters-results.tar.gz. Sizes:
# XB_COUNTER_SIZES (sweep), XB_NCU_PROBES (ncu; space-separated fixtures). XB_COUNTERS_SASS=0: no
# SASS metrics pass. Aims at under 3 minutes after the build: ncu probes still waiting 150 s after
# the build are skipped.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
h200_workdir /tmp/xb-counters ncu
check() { printf '%-64s %s\n' "$1" "$2" | tee -a "$OUT/checks.txt"; }
SIZES=${XB_COUNTER_SIZES:-64,1024,2048,4096,8192,16384}
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "user: $(id -un) (uid $(id -u))"
  echo "RmProfilingAdminOnly (1 = performance counters for admin users only):"
  grep -i profiling /proc/driver/nvidia/params 2>/dev/null || echo "  /proc/driver/nvidia/params not readable"
  command -v ncu && ncu --version | tail -1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
h200_build "$OUT/build.log" 40 || { echo "build failed"; exit 1; }
BUILT=$SECONDS  # the time limits below count from here (a cold build is not the counters' time)
echo "build: ${BUILT} s"
B=build-h200
export XB_COUNTERS_LOG="$OUT/counters_log.txt"
: > "$XB_COUNTERS_LOG"

# 1. The counter GPU tests (the collector on one add kernel; bench --counters end to end).
timeout 150 $B/tests/xb_gpu_tests --gtest_filter='*Counter*:-*Probe*' > "$W/counter_gpu_tests.txt" 2>&1
check "xb_gpu_tests *Counter*" "exit $?, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$W/counter_gpu_tests.txt" | tr '\n' ' ')"
grep -E 'SKIPPED|unavailable|Failure|Expected|Which is' "$W/counter_gpu_tests.txt" | head -20

# 2. The sweep with --counters (no graph timing, if this build has that option: halves the time).
NG=; $B/bench sweep --help 2>&1 | grep -q -- --no-graph && NG=--no-graph
timeout 200 $B/bench sweep --op add,matmul --dtype bf16 --size "$SIZES" $NG --counters --active-steps 5 \
  --out "$W/sweep" > "$W/sweep.log" 2>&1
check "bench sweep add,matmul bf16 $SIZES --counters" "exit $?"
sed -n '/^counters/,$p' "$W/sweep.log" | head -40
python3 - "$W/sweep" <<'EOF' | tee -a "$OUT/checks.txt"
import json, sys
d = sys.argv[1]
try:
    c = json.load(open(f"{d}/counters.json"))
except Exception as e:
    print(f"counters.json: not readable: {e}"); sys.exit()
print(f"counters.json: status {c['status']} {c['reason']!r}; chip {c['device']['chip']}; passes {c['passes']}")
sass = c.get("sass", {})
print(f"  SASS metrics pass: {sass.get('status')} {sass.get('reason', '')!r}")
for f in c["fixtures"]:
    pc = f.get("per_call", {})
    print(f"  {f['name']:22} DRAM read {pc.get('dram_read_bytes', 0):14.0f} written {pc.get('dram_write_bytes', 0):14.0f}"
          f"  SASS FLOPs {pc.get('sass_flops', 0):16.0f} tensor FLOPs {pc.get('tensor_flops', 0):18.0f}"
          f"{'  error: ' + f['error'] if f['error'] else ''}{'  SASS: ' + f.get('sass', {}).get('error', '') if f.get('sass', {}).get('error') else ''}")
print("  rejected:", [m["name"] + ": " + m.get("reason", "") for m in c["metrics"] if not m["accepted"]])
try:
    v = json.load(open(f"{d}/validation.json"))
    print("model_vs_counters:", v["verdicts"].get("model_vs_counters"))
    for r in v["checks"]:
        if r["check"] == "model_vs_counters":
            print(f"  {r['status']:8} {r['subject']:22} {r['message'][:150]}")
except Exception as e:
    print(f"validation.json: not readable: {e}")
EOF
python3 scripts/plot_sweep.py "$W/sweep" > "$W/plot.log" 2>&1 && cp "$W/sweep/roofline.png" "$OUT/"
check "plot_sweep.py (roofline with measured points)" "exit $?, $(tail -1 "$W/plot.log")"

# 3. Nsight Compute on the same kernels: 2K back-to-back calls each, between cudaProfilerStart/Stop.
METRICS=$(python3 - <<'EOF'
import json
names = []
try:
    # The accepted ones, and the SASS FLOP metrics always: ncu counts them by its own patching.
    names = [m["name"] for m in json.load(open("/tmp/xb-counters/sweep/counters.json"))["metrics"]
             if m["accepted"] or m.get("source") == "sass_metrics"]
except Exception:
    pass
print(",".join(names) or "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum")
EOF
)
K=$(python3 -c "
import json
try: print(json.load(open('/tmp/xb-counters/sweep/counters.json'))['fixtures'][0]['calls'])
except Exception: print(16)")
PROBES=${XB_NCU_PROBES:-add/bf16/4096 add/bf16/8192 add/bf16/16384 matmul/bf16/2048 matmul/bf16/4096 matmul/bf16/8192}
probe() {  # probe FIXTURE CSV
  if [ $((SECONDS - BUILT)) -gt 150 ]; then check "ncu $1 (K = $K)" "skipped: $((SECONDS - BUILT)) s after the build"; return; fi
  local t0=$SECONDS
  XB_PROBE=$1 XB_PROBE_CALLS=$K timeout 60 ncu --profile-from-start off --cache-control none --clock-control none --csv \
    --print-units base --metrics "$METRICS" $B/tests/xb_gpu_tests --gtest_filter='*CounterProbe*' > "$2" 2>&1
  check "ncu $1 (2K = $((2 * K)) calls, --cache-control none)" \
    "exit $?, $(grep -c '"' "$2") csv lines, $((SECONDS - t0)) s$(grep -o 'ERR_NVGPUCTRPERM' "$2" | head -1 | sed 's/^/, /')"
}
for p in $PROBES; do probe "$p" "$W/ncu/$(echo "$p" | tr / _).csv"; done
python3 - "$W" > "$OUT/counters_vs_ncu.txt" 2>&1 <<'EOF'
# crossbench's counter pass (sweep/counters.json) against Nsight Compute (ncu/*.csv), per call:
# crossbench's K profiled calls' totals / K (after K warm-up calls) against the last K calls'
# kernels of ncu's 2K back-to-back calls / K (--cache-control none: the same steady state).
# DRAM bytes and tensor FLOPs within 2%; SASS FLOPs compared only where crossbench counted them;
# duration reported only (ncu serializes and replays each kernel).
import csv, io, json, os, sys
w = sys.argv[1]
c = json.load(open(f"{w}/sweep/counters.json"))
weights = {m["name"]: (m["quantity"], m["weight"]) for m in c["metrics"]}
def figures(values_list, calls):  # per call, from one dict of metric values per kernel
    q = {"dram_bytes": 0.0, "tensor_flops": 0.0, "sass_flops": 0.0, "duration_ns": 0.0}
    for vals in values_list:
        for name, v in vals.items():
            kind, wt = weights.get(name, (None, 0))
            if kind in ("dram_read_bytes", "dram_write_bytes"): q["dram_bytes"] += v
            elif kind in ("sass_flops", "tensor_flops"): q[kind] += v * wt
            elif kind == "duration_ns": q["duration_ns"] += v
    return {k: v / calls for k, v in q.items()}
def ncu_kernels(path):
    text = open(path).read()
    start = text.find('"ID"')
    if start < 0: return None, text[-400:]
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    kernels = {}
    for r in rows:
        if "Metric Name" not in r: continue
        v = (r.get("Metric Value") or "").replace(",", "")
        try: x = float(v)
        except ValueError: continue
        kernels.setdefault(r["ID"], {})[r["Metric Name"]] = x
    return [kernels[k] for k in sorted(kernels, key=int)], ""
print(f"{'fixture':22} {'quantity':12} {'crossbench':>16} {'ncu':>16} {'diff':>8}  verdict (2%), per call")
bad = 0
def compare(f, path):
    global bad
    if f["error"]:
        print(f"{f['name']:22} crossbench error: {f['error']}"); bad += 1; return
    ks, tail = ncu_kernels(path)
    if not ks:
        print(f"{f['name']:22} ncu gave no metrics: ...{tail!r}"); bad += 1; return
    k = f["calls"]
    per_call = len(f["kernels"]) // k
    last = ks[-k * per_call:]
    sass = f.get("sass", {}).get("values", {})
    sass_note = "counted" if sass else "not counted by CUPTI on this GPU (" + f.get("sass", {}).get("error", "none") + ")"
    a = figures([x["values"] for x in f["kernels"]] + ([sass] if sass else []), k); b = figures(last, k)
    ok_count = len(ks) == 2 * k * per_call
    bad += 0 if ok_count else 1
    print(f"{f['name']:22} K = {k}: crossbench {len(f['kernels'])} kernels ({per_call} per call), ncu {len(ks)} kernels of 2K calls "
          f"({'ok' if ok_count else 'OFF: expected ' + str(2 * k * per_call)}), last {len(last)} compared; SASS: {sass_note}")
    for q in ("dram_bytes", "tensor_flops", "sass_flops", "duration_ns"):
        d = (a[q] / b[q] - 1) * 100 if b[q] else (0.0 if a[q] == 0 else float("nan"))
        if q == "sass_flops" and not sass:
            print(f"{'':22} {q:12} {'not counted':>16} {b[q]:16.0f} {'':>8}  not counted by CUPTI on this GPU (ncu instruments the SASS itself)")
            continue
        only = q == "duration_ns"
        ok = only or abs(d) <= 2 or (a[q] == 0 and b[q] == 0)
        bad += 0 if ok else 1
        print(f"{'':22} {q:12} {a[q]:16.0f} {b[q]:16.0f} {d:+7.2f}%  {'ok' if ok else 'OFF'}{' (reported only)' if only else ''}")
    model = f["model"]["bytes"]
    if model and f["op"] == "add":
        print(f"{'':22} {'vs model':12} DRAM bytes per call: crossbench {(a['dram_bytes'] / model - 1) * 100:+.2f}%, ncu {(b['dram_bytes'] / model - 1) * 100:+.2f}% of {model:.0f}")
for f in c["fixtures"]:
    path = f"{w}/ncu/{f['name'].replace('/', '_')}.csv"
    if os.path.exists(path): compare(f, path)
print("AGREE" if bad == 0 else f"{bad} DISAGREEMENTS")
EOF
check "crossbench counters vs ncu (bytes, tensor FLOPs within 2%, per call)" "$(tail -1 "$OUT/counters_vs_ncu.txt")"
cat "$OUT/counters_vs_ncu.txt"
tar czf "$OUT/counters-results.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  -C "$W" sweep ncu counter_gpu_tests.txt sweep.log plot.log 2>/dev/null
echo; cat "$OUT/checks.txt"; echo "CUPTI calls and metrics: $(wc -l < "$XB_COUNTERS_LOG") lines in counters_log.txt"
echo "script time: ${SECONDS} s (build ${BUILT} s)"
grep -E 'rejected|INSUFFICIENT|failed|isAllPass|user replay|SASS' "$XB_COUNTERS_LOG" | cut -c1-300 | sort | uniq -c | head -40
