#!/usr/bin/env bash
# Gate the H200 check suite against the committed baseline (results/baselines/h200.json):
# unchanged build (expect 0), one fixture slowed by 10 us (expect 1, only that fixture), a baseline
# naming another GPU (expect 2); then compute-sanitizer (tools/lab/h200_sanitize.sh). Everything in
# one tarball, $OUT/gate.tar.gz, plus $OUT/gate_checks.md. Run through the device tool.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-gate logs sanitize
h200_build "$W/logs/build.log" 30 || exit 1
B=./build-h200/bench
S=results/suites/h200-gate.json
BL=results/baselines/h200.json
C="$W/gate_checks.md"
echo "# bench qualify against $BL ($(date -u +%Y-%m-%dT%H:%M:%SZ))" > "$C"
$B qualify --suite $S --baseline $BL --out "$W/pass" > "$W/logs/pass.log" 2>&1
echo "- unchanged build: exit $? (expected 0)" >> "$C"
$B qualify --suite $S --baseline $BL --slow-fixture add/bf16/8192=10 --out "$W/slowed" > "$W/logs/slowed.log" 2>&1
echo "- --slow-fixture add/bf16/8192=10: exit $? (expected 1)" >> "$C"
python3 -c "
import json
d = json.load(open('$BL')); d['environment']['gpu_name'] = 'NVIDIA H100 80GB HBM3'; json.dump(d, open('$W/h100.json', 'w'))"
$B qualify --suite $S --baseline "$W/h100.json" --out "$W/mismatch" > "$W/logs/mismatch.log" 2>&1
echo "- baseline naming another GPU: exit $? (expected 2): $(tail -1 "$W/logs/mismatch.log"); folder written: $([ -e "$W/mismatch" ] && echo yes || echo no)" >> "$C"
rm -f "$W/h100.json"
for d in pass slowed; do
  python3 - "$W/$d/qualify.json" >> "$C" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"  - {sys.argv[1].split('/')[-2]}: " + ", ".join(f"{f['key']} {f['verdict']} ({(f.get('delta_pct') or 0):+.2f}%, threshold {100 * f.get('threshold', 0):.0f}%)" for f in d["fixtures"]))
PY
  for r in "$W/$d"/run-*; do rm -f "$r/raw_session.json" "$r/trace_only.json" "$r/full.json"; done
done
OUT="$W/sanitize" XB_SAN_TIMEOUT=20 timeout 100 bash tools/lab/h200_sanitize.sh > "$W/logs/sanitize.log" 2>&1
echo "- compute-sanitizer: exit $?" >> "$C"; sed 's/^/  - /' "$W/sanitize/sanitize-verdict.txt" >> "$C"
cp "$C" "$OUT/"
tar -czf "$OUT/gate.tar.gz" -C "$W" .
cat "$C"
