#!/usr/bin/env bash
# Issues 17 and 19 on the H200 machine, through the device tool:
#   bash scripts/h200_speed.sh
# Builds build-h200; runs the whole gpu label (graph mode, add kernel, profiler attribution);
# the sweep with its eager-vs-graph columns (matmul and add, 64..4096) and its validation;
# `bench overhead --breakdown` (add, matmul) and PyTorch's profiler overhead measured the same way
# in the same call; `bench tune-add` at the small sizes (64, 256, 1024); the add kernel against
# PyTorch's, both launched from one Python loop, in interleaved rounds (target xb_add_shim, then
# scripts/add_vs_torch.py; XB_ADD_ARGS passes it more arguments); cold mode (bench's ops, and a user's
# saxpy through scripts/h200_core.sh user); the main job's wall time. Steps can
# be skipped: XB_SKIP="gpu sweep overhead tune add cold e2e". $OUT: checks.txt, speed.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
h200_workdir /tmp/xb-speed
check() { printf '%-60s %s\n' "$1" "$2" | tee -a "$OUT/checks.txt"; }
skip() { [[ " ${XB_SKIP:-} " == *" $1 "* ]]; }
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$W/machine.txt" 2>&1
h200_build "$W/build.log" 40 || { cp "$W/build.log" "$OUT/"; echo "build failed"; exit 1; }
B=build-h200
if ! skip gpu; then
  timeout 300 ctest --test-dir $B -L gpu -E "${XB_CTEST_EXCLUDE:-^$}" --output-on-failure > "$W/ctest_gpu.txt" 2>&1
  check "ctest -L gpu" "exit $?, $(grep -E 'tests passed' "$W/ctest_gpu.txt")"
  grep -E "^\s+[0-9]+ - |\(Failed\)" "$W/ctest_gpu.txt" | head -20
fi
if ! skip sweep; then
  timeout 240 $B/bench sweep --op matmul,add --size 64,256,1024,4096 --out "$W/sweep" > "$W/sweep.log" 2>&1
  check "bench sweep --op matmul,add --size (64,256,1024,4096; graph columns)" "exit $?, $(grep -E '^validation' "$W/sweep.log")"
  sed -n '/## Eager launches vs CUDA graph/,/## Crossover/p' "$W/sweep/sweep.md" | head -20
fi
if ! skip overhead; then
  timeout 240 $B/bench overhead --breakdown --op add,matmul --out "$W/overhead.json" > "$W/overhead.md" 2>&1
  check "bench overhead --breakdown --op add,matmul" "exit $?"
  cat "$W/overhead.md"
  timeout 200 python3 - "$W/torch_overhead.json" <<'PY' 2>&1 | tee "$W/torch_overhead.txt"
import json, sys
sys.path.insert(0, "scripts")
import vs_torch
rows = {op: vs_torch.torch_overhead(op) for op in ("add", "matmul")}
for op, r in rows.items():
    print(f"torch.profiler {op} 64: off {r['off_ns'] / 1e3:.1f} us, on {r['on_ns'] / 1e3:.1f} us, ratio {r['ratio']:.3f}")
json.dump(rows, open(sys.argv[1], "w"), indent=1)
PY
fi
if ! skip tune; then
  timeout 200 $B/bench tune-add --size 64,256,1024 --launches 30 --passes 3 --out "$W/tune_add_small.json" \
    > "$W/tune_add_small.md" 2> "$W/tune_add_small.err"
  check "bench tune-add --size 64,256,1024" "exit $?"
  grep -E "^fastest|^\| *v1/t256/default" "$W/tune_add_small.md" | head -20
fi
if ! skip add; then
  # Both adds from one Python loop on one torch stream: ours through the ctypes shim (built only
  # when asked). XB_ADD_ARGS adds arguments, e.g. "--candidates v1/t128/default,... --patterns eager,graph,isolated".
  cmake --build $B --target xb_add_shim > "$W/add_shim_build.log" 2>&1
  check "cmake --build $B --target xb_add_shim" "exit $?"
  # shellcheck disable=SC2086  # XB_ADD_ARGS is split into arguments on purpose
  timeout 280 python3 -u scripts/add_vs_torch.py --shim $B/libxb_add_shim.so --out "$W/add_vs_torch" --rounds 3 \
    ${XB_ADD_ARGS:-} > "$W/add_vs_torch.log" 2>&1
  check "scripts/add_vs_torch.py (3 rounds; exit 1: an output differs)" "exit $?, $(grep -E '^(setup|round 2):' "$W/add_vs_torch.log" | tr '\n' ' ')"
  cat "$W/add_vs_torch/add_vs_torch.md" 2>/dev/null || tail -5 "$W/add_vs_torch.log"
fi
if ! skip cold; then
  # Issue 15: cold mode is batched (one flush, then each instance once): event vs CUPTI per call
  # must hold without the one-call allowance, for bench's ops and a user's program alike.
  timeout 120 $B/bench --op add,matmul --size 64,4096 --mode cold --warmup --out "$W/cold" > "$W/cold.log" 2>&1
  check "bench --op add,matmul --size 64,4096 --mode cold --warmup" "exit $?, $(grep -E '^(PASSED|FAILED)' "$W/cold.log" | head -1)"
  grep -E "event_vs_cupti|\(cold\)" "$W/cold/summary.md" 2>/dev/null | head -8
  OUT=$W/user XB_SKIP_CMDS=1 timeout 200 bash scripts/h200_core.sh user > "$W/user.log" 2>&1
  check "scripts/h200_core.sh user (saxpy hot and cold, installed package)" "exit $?"
  grep -E "saxpy|event_vs_cupti" "$W/user/checks.txt" 2>/dev/null | head -10
fi
if ! skip e2e; then
  t1=$(date +%s%N)
  timeout 120 $B/bench --size 64,4096 --warmup --out "$W/e2e" > "$W/e2e.log" 2>&1
  check "bench --size 64,4096 --warmup (target <= 20 s)" "exit $?, wall $(( ($(date +%s%N) - t1) / 1000000 )) ms"
  rm -f "$W"/e2e/{raw_session.json,full.json,trace_only.json}
fi
rm -f "$W"/sweep/{raw_session.json,full.json,trace_only.json}
cp "$OUT/checks.txt" "$W/"
tar czf "$OUT/speed.tar.gz" -C "$W" .
ls -la "$OUT"
