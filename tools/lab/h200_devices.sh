#!/usr/bin/env bash
# Issue 21 (several GPUs) on the single H200, through the device tool:
#   bash tools/lab/h200_devices.sh
# Builds build-h200, then on the one GPU:
# 1. bench --devices 0 --size 64,4096 --warmup        -> $W/dev0   (expect exit 0)
# 2. bench --devices all --size 64,4096 --warmup      -> $W/devall (expect exit 0, the same layout)
# 3. bench qualify --devices all against results/baselines/h200.json with the check suite
#    results/suites/h200-gate.json                     -> $W/qualify (expect exit 0; 3 = inconclusive)
# 4. bench qualify --aggregate over that folder        -> $W/aggregate (expect the same result)
# 5. the devices CPU tests (ctest -R 'Devices|QualifyAggregate') on this machine.
# Checks each folder's files (device-0/ with a validating run folder, devices.md/.json, no device-1)
# and that the two layouts are identical; writes $OUT/checks.txt, $OUT/devices.tar.gz (the run
# folders without their traces) and $OUT/machine.txt. About 2 to 3 minutes with the build.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-devices logs
h200_machine "$OUT/machine.txt"
h200_build_or_exit "$W/logs/build.log" 40
B=build-h200/bench
timeout 150 $B --devices 0 --size 64,4096 --warmup --out "$W/dev0" > "$W/logs/dev0.log" 2>&1
check "bench --devices 0 --size 64,4096 --warmup" "exit $? (expected 0)"
timeout 150 $B --devices all --size 64,4096 --warmup --out "$W/devall" > "$W/logs/devall.log" 2>&1
check "bench --devices all --size 64,4096 --warmup" "exit $? (expected 0)"
layout() { (cd "$1" && find . -type f | sort); }
if diff <(layout "$W/dev0") <(layout "$W/devall") > "$W/logs/layout.diff"; then same=yes; else same=no; fi
check "same files under --devices 0 and --devices all" "$same (expected yes)"
for d in dev0 devall; do
  timeout 60 build-h200/validate "$W/$d/device-0" > "$W/logs/validate_$d.txt" 2>&1
  check "validate $d/device-0" "exit $? (expected 0)"
  python3 - "$W/$d" >> "$OUT/checks.txt" 2>&1 <<'PY'
import json, os, sys
d = sys.argv[1]
doc = json.load(open(os.path.join(d, "devices.json")))
dev = doc["devices"]
ctx = json.load(open(os.path.join(d, "device-0", "benchmark.json")))["context"]
meta = json.load(open(os.path.join(d, "device-0", "raw_session.json")))["meta"]["gpu"]
print(f"  {os.path.basename(d)}: devices.json result {doc['result']}, {len(dev)} device(s): "
      f"{[(x['index'], x['gpu_name'], x['gpu_uuid'], x['gpu_pci_bus_id'], x['status']) for x in dev]}")
print(f"  benchmark.json context gpu_uuid {ctx.get('gpu_uuid')} gpu_pci_bus_id {ctx.get('gpu_pci_bus_id')}; "
      f"raw_session meta.gpu uuid {meta['uuid']} pci_bus_id {meta['pci_bus_id']}; "
      f"device-1 exists: {os.path.exists(os.path.join(d, 'device-1'))} (expected False)")
PY
done
timeout 240 $B qualify --devices all --suite results/suites/h200-gate.json --baseline results/baselines/h200.json \
  --out "$W/qualify" > "$W/logs/qualify.log" 2>&1
check "bench qualify --devices all (h200-gate against results/baselines/h200.json)" "exit $? (expected 0; 3 = inconclusive)"
python3 - "$W/qualify" >> "$OUT/checks.txt" 2>&1 <<'PY'
import json, os, sys
d = sys.argv[1]
agg = json.load(open(os.path.join(d, "aggregate.json")))
q = json.load(open(os.path.join(d, "device-0", "qualify.json")))
print(f"  aggregate.json: result {agg['result']}, nodes {[(n['node'], n['result']) for n in agg['nodes']]}")
print(f"  device-0/qualify.json: result {q['result']}, host {q.get('host')}, gpu_pci_bus_id "
      f"{q['environment'].get('gpu_pci_bus_id')}, differences {[x['what'] for x in q['differences']]}")
print(f"  devices.json result: {json.load(open(os.path.join(d, 'devices.json')))['result']}")
PY
timeout 60 $B qualify --aggregate "$W/qualify" --out "$W/aggregate" > "$W/logs/aggregate.log" 2>&1
check "bench qualify --aggregate over it" "exit $? (expected the qualification's)"
timeout 120 ctest --test-dir build-h200 -R 'Devices|QualifyAggregate|slurm_qualify' > "$W/logs/ctest_devices.txt" 2>&1
check "ctest -R 'Devices|QualifyAggregate|slurm_qualify'" "exit $?, $(grep -E 'tests passed' "$W/logs/ctest_devices.txt")"
cp "$W/dev0/devices.md" "$OUT/dev0-devices.md" 2>/dev/null
cp "$W/qualify/aggregate.md" "$OUT/qualify-aggregate.md" 2>/dev/null
tar czf "$OUT/devices.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' -C "$W" . 2>/dev/null
echo; cat "$OUT/checks.txt"
