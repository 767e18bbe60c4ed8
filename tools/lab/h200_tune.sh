#!/usr/bin/env bash
# Where the add kernel and the profiler's host cost stand on the H200 (through the device tool,
# from the repository root):
#   bash tools/lab/h200_tune.sh
# Builds in build-h200, runs the add kernel's GPU tests (every configuration bit-exact), then
# `bench tune-add` (every add configuration timed with CUPTI), PyTorch's add timed the same way as
# tools/lab/vs_torch.py does (kernel records, after a warm-up), and `bench overhead --breakdown`
# (what each CUPTI activity kind costs per launch). Results: $OUT/tune.tar.gz, $OUT/summary.txt.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-tune logs
h200_machine "$W/logs/machine.txt"
t0=$(date +%s)
h200_build_or_exit "$W/logs/build.log" 40
echo "build ok ($(( $(date +%s) - t0 )) s)"
./build-h200/tests/xb_gpu_tests --gtest_filter='*AddKernel*:*AddTuning*:*AddZero*' > "$W/logs/add_tests.log" 2>&1
echo "add kernel tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$W/logs/add_tests.log" | head -3 | tr '\n' ' ')"
./build-h200/bench tune-add ${XB_TUNE_ARGS:-} --out "$W/tune_add.json" > "$W/tune_add.md" 2> "$W/logs/tune_add.err"
echo "tune-add exit $?"; grep -E "^fastest" "$W/tune_add.md"
python3 - "$W/torch_add.json" > "$W/logs/torch_add.log" 2>&1 <<'PY'
import json, sys
sys.path.insert(0, "tools/lab")
import vs_torch
rows = []
for d in ("bf16", "fp16", "fp32"):
    for n in (1024, 2048, 4096, 8192, 16384):
        t = vs_torch.torch_kernels("add", d, n, 50 if n >= 8192 else 100, 2.0)
        rows.append({"dtype": d, "n": n, **t})
        print(f"torch add {d} {n}: per call {t['per_call_ns'] / 1e3:.2f} us, median {t['kernel_median_ns'] / 1e3:.2f} us", flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=1)
PY
echo "torch add exit $?"; cat "$W/logs/torch_add.log"
./build-h200/bench overhead --breakdown --out "$W/overhead.json" > "$W/overhead.md" 2> "$W/logs/overhead.err"
echo "overhead exit $?"; cat "$W/overhead.md"
{ cat "$W/logs/machine.txt"; grep -E "^fastest|^## " "$W/tune_add.md"; cat "$W/logs/torch_add.log" "$W/overhead.md"; } > "$OUT/summary.txt"
tar -czf "$OUT/tune.tar.gz" -C "$W" .
ls -la "$OUT"
