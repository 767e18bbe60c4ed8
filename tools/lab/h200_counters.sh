#!/usr/bin/env bash
# Issue 18 (hardware counters as a third witness) on the H200 machine, through the device tool:
#   bash tools/lab/h200_counters.sh
# Builds build-h200; says whether GPU performance counters are open to this user; runs the counter
# GPU tests (every CUPTI call's result and each metric accepted or rejected are logged); a sweep of
# add and matmul bf16 at every power of two 64..16384 with --counters (modeled vs counted bytes and
# FLOPs, the roofline with measured points; model_vs_counters with the GEMMs' tile-padded model);
# then, per probe fixture (add bf16 4096, 16384, matmul bf16 4096, 16384), crossbench's counter
# pass on that fixture alone in a fresh process (CounterPassProbeInAFreshProcess: no timing pass
# before it) right before Nsight Compute's probe of it, the GPU's SM clock, power and temperature
# recorded before, during (every 250 ms) and after each (nvidia-smi; <fixture>.gpu.csv), and the
# comparison (tools/lab/counters_vs_ncu.py --fresh): the fresh-process pass against ncu first (the
# fair comparison: both passes find the GPU in the same state, which the kernel durations and
# clocks show), the sweep's pass against ncu second (for reference: it runs after the sweep's
# timing pass, at other clocks). Medians of the K per-call values are compared within 2%, each
# side's call-to-call spread printed (docs/metrics.md, "Comparing with Nsight Compute").
# The counter pass measures the steady state of back-to-back calls: per fixture K (16) calls
# profiled after K warm-up calls (docs/metrics.md, "Hardware counters"); ncu profiles every kernel
# of the same 2K back-to-back calls (the probe, CounterProbeOneCallForNsightCompute) with
# --cache-control none --clock-control none, and the comparison takes the last K calls' kernels.
# ncu runs in APPLICATION replay (--replay-mode application): each metric pass relaunches the whole
# probe process (1 + 2K calls after a process start, about 1 to 2 s of idle GPU), so no pass
# restores memory around a kernel and each kernel finds the L2 as the call before it left it, as in
# crossbench's pass (kernel replay saves and restores memory around every pass of each kernel: its
# DRAM bytes were 19% and 5% off at add 4096 and 8192). That needs a deterministic launch sequence,
# which the probe has (a fixed 1 + 2K calls, fixed seeds, no stopping rule); --app-replay-mode
# strict makes ncu refuse a pass whose kernels differ. ncu asks only for the metrics the comparison
# uses (DRAM bytes, tensor and SASS FLOPs, duration), fewer passes. The fresh-process pass idles the
# GPU XB_FRESH_IDLE_MS (1000) ms before each of its replay passes, spacing them as ncu's relaunches
# space its own; matmul 16384 also runs it with no idle (bench's own spacing), compared in a third
# table, to show what the spacing changes. SASS FLOPs that CUPTI does not count on this GPU (GH100
# offers no per-opcode SASS metric) are reported as "not counted by CUPTI on this GPU", not as a
# disagreement. XB_FRESH_GAP_MS (default 0): the fresh-process pass also synchronizes and idles
# that long between consecutive calls (XB_PROBE_GAP_MS), as ncu's per-kernel collection leaves the
# GPU idle between kernels: a GEMM that reaches the power limit back to back then runs at the
# clocks it has under ncu. $OUT: machine.txt, build.log, checks.txt, counters_vs_ncu.txt, counters_log.txt,
# roofline.png (when matplotlib is there), counters-results.tar.gz (sweep/, fresh/, ncu/ with the
# .gpu.csv state files, logs). Sizes: XB_COUNTER_SIZES (sweep), XB_NCU_PROBES (space-separated
# fixtures). XB_COUNTER_CALLS: K for the probes on both sides (default: the sweep's, 16);
# XB_FRESH_TIMEOUT_S (100): the fresh-process pass's limit (15 passes of 2K calls: K = 64 with a
# 50 ms gap needs about 120 s, counters-2026-12-02/run1).
# XB_COUNTERS_SASS=0: no SASS metrics pass. XB_NCU_KERNEL_REPLAY=1: also ncu's kernel replay on
# the probes, for reference, time allowing. Aims at under 5 minutes after the build: a
# probe pair does not start 215 s after the build, and none runs past 290 s.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-counters ncu ncu-kernel-replay fresh fresh-no-idle ncu-no-idle
SIZES=${XB_COUNTER_SIZES:-64,128,256,512,1024,2048,4096,8192,16384}
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "user: $(id -un) (uid $(id -u))"
  echo "RmProfilingAdminOnly (1 = performance counters for admin users only):"
  grep -i profiling /proc/driver/nvidia/params 2>/dev/null || echo "  /proc/driver/nvidia/params not readable"
  command -v ncu && ncu --version | tail -1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
h200_build_or_exit "$OUT/build.log" 40
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
            print(f"  {r['status']:8} {r['subject']:22} {r['message'][:400]}")
    for t in v.get("figures", {}).get("model_vs_counters", []):
        print(f"  tile quantization {t['fixture']:20} {t['cta_tile']:11} useful {t['useful_flops']:.0f} executed "
              f"{t['executed_flops']:.0f} (waste {t['tile_quantization_waste_pct']:+.4f}%) counted {t['counted_flops']:.0f}: "
              f"{t['vs_useful_pct']:+.4f}% of useful, {t['vs_executed_pct']:+.4f}% of executed; {t['kernel']}")
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
    # What the comparison uses, of the accepted metrics, and the SASS FLOP metrics always (ncu
    # counts them by its own patching); no throughputs (they only add passes).
    used = ("dram_read_bytes", "dram_write_bytes", "tensor_flops", "sass_flops", "duration_ns")
    names = [m["name"] for m in json.load(open("/tmp/xb-counters/sweep/counters.json"))["metrics"]
             if m["quantity"] in used and (m["accepted"] or m.get("source") == "sass_metrics")]
except Exception:
    pass
print(",".join(names) or "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum")
EOF
)
# K: the sweep's calls per fixture (16), or XB_COUNTER_CALLS for both sides of the probes (the
# fresh-process pass's XB_PROBE_CALLS and ncu's 2K calls): medians over more calls.
K=${XB_COUNTER_CALLS:-$(python3 -c "
import json
try: print(json.load(open('/tmp/xb-counters/sweep/counters.json'))['fixtures'][0]['calls'])
except Exception: print(16)")}
PROBES=${XB_NCU_PROBES:-add/bf16/4096 add/bf16/16384 matmul/bf16/4096 matmul/bf16/16384}
IDLE_MS=${XB_FRESH_IDLE_MS:-1000}
echo "ncu metrics: $METRICS"
# The GPU's state around a run: with_gpu_state FILE CMD...: FILE gets "before, <SM MHz>, <W>, <C>",
# "during, ..." every 250 ms while CMD runs, then "after, ..." (counters_vs_ncu.py summarizes it).
GPU_ID=${CUDA_VISIBLE_DEVICES:-0}
GPU_ID=${GPU_ID%%,*}
# shellcheck disable=SC2054  # the commas are nvidia-smi's, inside one argument
SMI=(nvidia-smi -i "$GPU_ID" --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits)
with_gpu_state() {
  local file=$1 sampler rc
  shift
  echo "before, $("${SMI[@]}" 2>&1 | head -1)" > "$file"
  : > "$file.during"
  "${SMI[@]}" -lms 250 >> "$file.during" 2>/dev/null &
  sampler=$!
  "$@"
  rc=$?
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  sed 's/^/during, /' "$file.during" >> "$file" && rm -f "$file.during"
  echo "after, $("${SMI[@]}" 2>&1 | head -1)" >> "$file"
  return $rc
}
late() {  # late START_BY NEED: true when START_BY s after the build have passed or fewer than NEED s of 290 are left
  local left=$((290 - (SECONDS - BUILT)))
  [ $((SECONDS - BUILT)) -gt "$1" ] || [ "$left" -lt "$2" ]
}
fresh() {  # fresh FIXTURE DIR IDLE_MS: crossbench's counter pass on FIXTURE alone, in a fresh process
  local fixture=$1 dir=$2 idle=$3 t0=$SECONDS s
  s=$(echo "$fixture" | tr / _)
  mkdir -p "$dir/$s"
  with_gpu_state "$dir/$s.gpu.csv" env XB_PROBE="$fixture" XB_PROBE_OUT="$dir/$s" XB_PROBE_IDLE_MS="$idle" \
    XB_PROBE_GAP_MS="${XB_FRESH_GAP_MS:-0}" XB_PROBE_CALLS="$K" \
    timeout "${XB_FRESH_TIMEOUT_S:-100}" $B/tests/xb_gpu_tests --gtest_filter='*CounterPassProbeInAFreshProcess*' > "$dir/$s.log" 2>&1
  check "crossbench fresh-process counter pass $fixture (K $K, idle $idle ms, gap ${XB_FRESH_GAP_MS:-0} ms)" \
    "exit $?, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$dir/$s.log" | head -1), $((SECONDS - t0)) s"
  grep -E 'SKIPPED|Failure|Expected|Which is|error' "$dir/$s.log" | head -5
}
probe() {  # probe REPLAY FIXTURE DIR: ncu on the probe's 1 + 2K calls of FIXTURE; REPLAY application|kernel
  local replay=$1 fixture=$2 dir=$3 t0=$SECONDS s csv
  local left=$((290 - (SECONDS - BUILT)))
  s=$(echo "$fixture" | tr / _)
  csv=$dir/$s.csv
  local opts=(--replay-mode "$replay")
  [ "$replay" = application ] && opts+=(--app-replay-match grid --app-replay-mode strict --app-replay-buffer file)
  with_gpu_state "$dir/$s.gpu.csv" env XB_PROBE="$fixture" XB_PROBE_CALLS="$K" \
    timeout $((left < 100 ? left : 100)) ncu "${opts[@]}" --profile-from-start off \
    --cache-control none --clock-control none --csv --print-units base --metrics "$METRICS" \
    $B/tests/xb_gpu_tests --gtest_filter='*CounterProbe*' > "$csv" 2>&1
  check "ncu $replay replay $fixture (2K = $((2 * K)) calls)" \
    "exit $?, $(grep -c '"' "$csv") csv lines, $((SECONDS - t0)) s$(grep -o 'ERR_NVGPUCTRPERM' "$csv" | head -1 | sed 's/^/, /')"
  grep -E '^==(ERROR|WARNING)==' "$csv" | sort | uniq -c | head -5
}
# Per fixture: crossbench's fresh-process pass, then ncu's probe right after it, in the same state.
for p in $PROBES; do
  if late 215 60; then check "fresh-process pass and ncu $p" "skipped: $((SECONDS - BUILT)) s after the build"; continue; fi
  fresh "$p" "$W/fresh" "$IDLE_MS"
  probe application "$p" "$W/ncu"
done
python3 tools/lab/counters_vs_ncu.py --fresh "$W/fresh" "$W/sweep" "$W/ncu" \
  "ncu --replay-mode application (each pass relaunches the probe process; no memory save/restore)" > "$OUT/counters_vs_ncu.txt" 2>&1
check "counters vs ncu, fresh process, application replay (2%, medians)" "$(tail -1 "$OUT/counters_vs_ncu.txt")"
check "counters vs ncu, the sweep's pass, for reference" "$(grep '^sweep vs ncu:' "$OUT/counters_vs_ncu.txt")"
# What the spacing of the passes changes: matmul 16384's fresh pass with its passes back to back
# (bench's own pass: no idle), against the same ncu probe.
M=matmul/bf16/16384
if [ -f "$W/ncu/matmul_bf16_16384.csv" ] && ! late 250 30; then
  fresh "$M" "$W/fresh-no-idle" 0
  cp "$W/ncu/matmul_bf16_16384.csv" "$W/ncu/matmul_bf16_16384.gpu.csv" "$W/ncu-no-idle/"
  python3 tools/lab/counters_vs_ncu.py --fresh "$W/fresh-no-idle" "$W/sweep" "$W/ncu-no-idle" \
    "$M, the fresh-process pass with no idle between its replay passes (bench's spacing), for reference" \
    > "$W/counters_vs_ncu_no_idle.txt" 2>&1
  check "counters vs ncu, $M fresh process without idle" "$(tail -1 "$W/counters_vs_ncu_no_idle.txt")"
  { echo; sed -n '/^## crossbench.s counter pass in a fresh/,/^fresh process vs ncu/p' "$W/counters_vs_ncu_no_idle.txt"; } \
    >> "$OUT/counters_vs_ncu.txt"
fi
if [ "${XB_NCU_KERNEL_REPLAY:-0}" = 1 ]; then
  for p in $PROBES; do
    if late 250 15; then check "ncu kernel replay $p" "skipped: $((SECONDS - BUILT)) s after the build"; continue; fi
    probe kernel "$p" "$W/ncu-kernel-replay"
  done
  if ls "$W/ncu-kernel-replay/"*.csv > /dev/null 2>&1; then
    python3 tools/lab/counters_vs_ncu.py "$W/sweep" "$W/ncu-kernel-replay" \
      "ncu --replay-mode kernel (for reference: memory saved and restored around every pass of each kernel)" \
      > "$W/counters_vs_ncu_kernel_replay.txt" 2>&1
    check "crossbench counters vs ncu, kernel replay (2%, medians)" "$(tail -1 "$W/counters_vs_ncu_kernel_replay.txt")"
    { echo; cat "$W/counters_vs_ncu_kernel_replay.txt"; } >> "$OUT/counters_vs_ncu.txt"
  fi
fi
cat "$OUT/counters_vs_ncu.txt"
# shellcheck disable=SC2046  # the optional files, split on purpose
tar czf "$OUT/counters-results.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  -C "$W" sweep ncu ncu-kernel-replay fresh fresh-no-idle counter_gpu_tests.txt sweep.log plot.log \
  $(cd "$W" && ls counters_vs_ncu_kernel_replay.txt counters_vs_ncu_no_idle.txt 2>/dev/null)
echo; cat "$OUT/checks.txt"; echo "CUPTI calls and metrics: $(wc -l < "$XB_COUNTERS_LOG") lines in counters_log.txt"
echo "script time: ${SECONDS} s (build ${BUILT} s)"
grep -E 'rejected|INSUFFICIENT|failed|isAllPass|user replay|SASS' "$XB_COUNTERS_LOG" | cut -c1-300 | sort | uniq -c | head -40
