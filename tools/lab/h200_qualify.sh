#!/usr/bin/env bash
# Issue 6's evidence on the H200 (run through the device tool, from the repository root):
#   bash tools/lab/h200_qualify.sh
# 1. builds in build-h200 and runs the spin-delay GPU tests (kernels/spin_delay.h);
# 2. records the H200 baseline: `bench qualify --suite results/suites/release.json
#    --update-baseline` -> results/baselines/h200.json (32 fixtures, about 2 minutes);
# 3. gates the check suite against it (expect exit 0: every fixture unchanged);
# 4. the same with --slow-fixture on one fixture (expect exit 1: exactly that fixture regresses,
#    by about the delay);
# 5. against a copy of the baseline whose GPU name says H100 (expect exit 2, one line, nothing run).
# The check suite is results/suites/h200-gate.json, a fair subset of the release suite (every op in
# bf16 at 64 and 4096, add at 8192: 9 fixtures, about 30 s a run) so that the whole script stays
# near 6 minutes of GPU time with the build; XB_QUALIFY_CHECK_SUITE=results/suites/release.json
# gates the full suite instead (about 2 minutes more per run). XB_QUALIFY_SLOW names the slowed
# fixture and its delay (default add/bf16/8192=10: a 94 us memory-bound kernel, +10 us = +11%).
# Everything lands in $OUT/qualify.tar.gz, plus $OUT/h200.json (the baseline) and
# $OUT/qualify_checks.md (what each step expected and got).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-qualify logs
CHECK_SUITE=${XB_QUALIFY_CHECK_SUITE:-results/suites/h200-gate.json}
SLOW=${XB_QUALIFY_SLOW:-add/bf16/8192=10}
SLOW_NAME=${SLOW%=*}
SLOW_US=${SLOW#*=}
BASELINE=results/baselines/h200.json
CHECKS="$W/qualify_checks.md"
t_start=$(date +%s)

h200_machine "$W/logs/machine.txt"
h200_build_or_exit "$W/logs/build.log" 40
echo "build ok ($(( $(date +%s) - t_start )) s)"
B=./build-h200/bench
./build-h200/xb_gpu_tests --gtest_filter='SpinDelay.*' > "$W/logs/spin_delay_tests.log" 2>&1
spin_rc=$?

step() {  # step NAME EXPECTED_EXIT ARGS...: one bench qualify run, its log, its exit code
  local name=$1 expected=$2; shift 2
  local t0
  t0=$(date +%s)
  "$B" qualify "$@" --out "$W/$name" > "$W/logs/$name.log" 2> "$W/logs/$name.err"
  local rc=$?
  echo "$name: exit $rc (expected $expected), $(( $(date +%s) - t0 )) s" | tee -a "$W/logs/steps.txt"
  return $rc
}

{
  echo "# bench qualify on the H200 ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo
  echo "check suite: $CHECK_SUITE; slowed fixture: $SLOW_NAME by $SLOW_US us"
  echo
  echo "- spin-delay GPU tests: exit $spin_rc (expected 0)"
} > "$CHECKS"

mkdir -p results/baselines
step baseline 0 --suite results/suites/release.json --baseline "$BASELINE" --update-baseline
echo "- record the baseline (release suite, --update-baseline): exit $? (expected 0; 3 = written, some fixture noisy or throttled)" >> "$CHECKS"
cp "$BASELINE" "$OUT/h200.json" 2>/dev/null

step pass 0 --suite "$CHECK_SUITE" --baseline "$BASELINE"
echo "- gate the check suite against it: exit $? (expected 0)" >> "$CHECKS"

step slowed 1 --suite "$CHECK_SUITE" --baseline "$BASELINE" --slow-fixture "$SLOW"
echo "- gate with --slow-fixture $SLOW: exit $? (expected 1)" >> "$CHECKS"
python3 - "$W/slowed/qualify.json" "$SLOW_NAME" "$SLOW_US" >> "$CHECKS" 2>&1 <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
name, us = sys.argv[2], float(sys.argv[3])
regressed = [f for f in doc["fixtures"] if f["verdict"] == "regression"]
others = sorted({f["verdict"] for f in doc["fixtures"] if f["name"] != name})
print(f"  - regressions: {[f['key'] for f in regressed]} (expected exactly {name}); other verdicts: {others}")
for f in doc["fixtures"]:
    if f["name"] == name:
        d_us = (f["delta_ns"] or 0) / 1e3
        ok = us <= d_us <= us * 1.3 + 2
        print(f"  - {name}: baseline {f['baseline_median_ns'] / 1e3:.3f} us, now {f['now_median_ns'] / 1e3:.3f} us, "
              f"delta {d_us:+.3f} us ({f['delta_pct']:+.2f}%), p = {f['p_value']:.2g}: "
              f"{'OK' if ok else 'UNEXPECTED'} (expected {us:g} us plus the ~1 us kernel gap)")
print(f"  - exactly that fixture: {'OK' if [f['name'] for f in regressed] == [name] else 'UNEXPECTED'}")
EOF

python3 -c "
import json, sys
d = json.load(open('$BASELINE'))
d['environment']['gpu_name'] = 'NVIDIA H100 80GB HBM3'
json.dump(d, open('$W/h100-baseline.json', 'w'))
" 2>> "$W/logs/steps.txt"
step mismatch 2 --suite "$CHECK_SUITE" --baseline "$W/h100-baseline.json"
rc=$?
echo "- against a copy of the baseline naming another GPU: exit $rc (expected 2); stderr: \`$(cat "$W/logs/mismatch.err")\`; folder written: $([ -e "$W/mismatch" ] && echo yes || echo no) (expected no)" >> "$CHECKS"
rm -f "$W/h100-baseline.json"

echo "- total: $(( $(date +%s) - t_start )) s" >> "$CHECKS"
cat "$W/logs/steps.txt"
cat "$CHECKS"
cp "$CHECKS" "$OUT/"
for d in baseline pass slowed; do
  for f in qualify.md qualify.json qualify.xml; do [ -f "$W/$d/$f" ] && cp "$W/$d/$f" "$OUT/$d-$f"; done
done
tar -czf "$OUT/qualify.tar.gz" -C "$W" .
ls -la "$OUT"
