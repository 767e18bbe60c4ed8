#!/usr/bin/env bash
# Issues 17 and 19 on the H200 machine, through the device tool:
#   bash tools/lab/h200_speed.sh
# Builds build-h200; runs the whole gpu label (graph mode, add kernel, profiler attribution);
# the sweep with its eager-vs-graph columns (matmul and add, 64..4096) and its validation;
# `bench overhead --breakdown` (add, matmul) and PyTorch's profiler overhead measured the same way
# in the same call; `bench tune-add` at the small sizes (64, 256, 1024); the add kernel against
# PyTorch's, both launched from one Python loop, in interleaved rounds (target xb_add_shim, then
# tools/lab/add_vs_torch.py; XB_ADD_ARGS passes it more arguments); why PyTorch's add is still ahead
# with its own launch shape (issue 19, each step under 3 minutes): `placement` (add_vs_torch.py
# --swap-outputs: does the gap follow the output buffer?), `ncu` (Nsight Compute on both kernels in
# one process, application replay, a per-metric table and both kernels' SASS), `variants` (the lean
# kernel's tuning-space entries against PyTorch's); cold mode (bench's ops, and a user's saxpy
# through tools/lab/h200_core.sh user); the main job's wall time. Steps can be skipped: XB_SKIP="gpu
# sweep overhead tune add placement ncu variants env cold e2e"; `env`: the DRAM-bound comparison with
# and without the toolkit's LD_LIBRARY_PATH, GPU UUID and mapped libraries recorded. Issue 19's
# steps alone: XB_SKIP="gpu sweep overhead tune add cold e2e" bash tools/lab/h200_speed.sh
# $OUT: checks.txt, speed.tar.gz; with the ncu step add_ncu_compare.md and add_ncu_reports.tar.gz
# (the .ncu-rep files, for `ncu --import`). The ncu step's probe: XB_NCU_SIZES (256,16384),
# XB_NCU_CONFIGS (v1/t128/default,v1/t128/default/lean), XB_NCU_CALLS (5), XB_NCU_REPLAY
# (application; kernel: one process, quicker, instruction and SASS figures only).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-speed
skip() { [[ " ${XB_SKIP:-} " == *" $1 "* ]]; }
# machine.txt: which H200 (results/h200/speed-2026-12-02: on two of the H200s lent so far
# crossbench's add ran 2-3% behind PyTorch's at the DRAM-bound sizes, PyTorch's own time
# unchanged), with its VBIOS, memory clock and ECC mode; smi_q.txt: nvidia-smi -q's clocks,
# performance, ECC, power, row-remapper and page-retirement pages, to compare such machines.
{ date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv
} > "$W/machine.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE,ECC,POWER,ROW_REMAPPER,PAGE_RETIREMENT > "$W/smi_q.txt" 2>&1
h200_build_or_exit "$W/build.log" 40
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
sys.path.insert(0, "tools/lab")
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
SHIM_BUILT=
add_shim() {  # the ctypes shim of crossbench's add kernel (built only when asked), once
  [ -n "$SHIM_BUILT" ] && return
  cmake --build $B --target xb_add_shim > "$W/add_shim_build.log" 2>&1
  check "cmake --build $B --target xb_add_shim" "exit $?"
  SHIM_BUILT=1
}
if ! skip add; then
  # Both adds from one Python loop on one torch stream: ours through the ctypes shim (built only
  # when asked). XB_ADD_ARGS adds arguments, e.g. "--candidates v1/t128/default,... --patterns eager,graph,isolated".
  add_shim
  # shellcheck disable=SC2086  # XB_ADD_ARGS is split into arguments on purpose
  timeout 280 python3 -u tools/lab/add_vs_torch.py --shim $B/libxb_add_shim.so --out "$W/add_vs_torch" --rounds 3 \
    ${XB_ADD_ARGS:-} > "$W/add_vs_torch.log" 2>&1
  check "tools/lab/add_vs_torch.py (3 rounds; exit 1: an output differs)" "exit $?, $(grep -E '^(setup|round 2):' "$W/add_vs_torch.log" | tr '\n' ' ')"
  cat "$W/add_vs_torch/add_vs_torch.md" 2>/dev/null || tail -5 "$W/add_vs_torch.log"
fi
if ! skip placement; then
  # Issue 19, 1: does PyTorch's 0.3% at 16384^2 follow the output buffer? In rounds 2, 3 (mod 4)
  # every side writes the other's output (the inputs stay shared): the main table's medians cancel
  # the buffer, the placement table splits each ratio into a kernel and a buffer factor. About 1 min.
  add_shim
  # shellcheck disable=SC2086  # XB_PLACEMENT_ARGS is split into arguments on purpose
  timeout 170 python3 -u tools/lab/add_vs_torch.py --shim $B/libxb_add_shim.so --out "$W/add_placement" --rounds 8 \
    --swap-outputs --sizes 256,4096,16384 --candidates v1/t128/default ${XB_PLACEMENT_ARGS:-} > "$W/add_placement.log" 2>&1
  check "add_vs_torch.py --swap-outputs (8 rounds; 256, 4096, 16384)" "exit $?, $(grep -E '^(setup|round 7):' "$W/add_placement.log" | tr '\n' ' ')"
  sed -n '/^Output buffer placement/,$p' "$W/add_placement/add_vs_torch.md" 2>/dev/null || tail -5 "$W/add_placement.log"
fi
if ! skip ncu; then
  # Issue 19, 2: Nsight Compute on both kernels, same process, same inputs, bf16 256^2 and 16384^2
  # (tools/lab/add_ncu_probe.py: K back-to-back calls per side and size). Application replay (the
  # probe rerun per metric pass; no memory save/restore, each kernel finds the L2 the kernel before
  # left), clocks and caches left alone. Two runs, so that the first (launch, occupancy, scheduler,
  # warp states, instructions, DRAM/L2 bytes, duration: few passes) survives a second that runs out
  # of time (memory tables, source counters: sectors per request, per-instruction SASS). Then the
  # per-metric table (tools/lab/add_ncu_compare.py), both kernels' SASS (ncu's source page; ours also
  # from cuobjdump of the shim; PyTorch's from libtorch_cuda.so with cuobjdump -fun, if time is
  # left) and an opcode table. Stops starting work 165 s after it began.
  add_shim
  N=$W/ncu
  mkdir -p "$N"
  t0=$SECONDS
  left() { echo $((165 - (SECONDS - t0))); }
  # shellcheck disable=SC2054  # commas inside arguments, not between elements
  probe=(python3 -u tools/lab/add_ncu_probe.py --shim "$B/libxb_add_shim.so" --manifest "$N/probe.json"
         --sizes "${XB_NCU_SIZES:-256,16384}" --dtype bf16 --calls "${XB_NCU_CALLS:-5}"
         --configs "${XB_NCU_CONFIGS:-v1/t128/default,v1/t128/default/lean}")
  # XB_NCU_REPLAY=kernel: ncu's kernel replay instead (one process; memory saved and restored
  # around every pass, so DRAM bytes are not the steady state's, instructions and SASS are).
  replay=${XB_NCU_REPLAY:-application}
  first_n=$(echo "${XB_NCU_SIZES:-256,16384}" | cut -d, -f1)
  if [ "$replay" = kernel ]; then
    ncu_app=(ncu --replay-mode kernel --profile-from-start off --cache-control none --clock-control none -f)
  else
    ncu_app=(ncu --replay-mode application --app-replay-match grid --app-replay-mode strict --app-replay-buffer file
             --profile-from-start off --cache-control none --clock-control none -f)
  fi
  timeout 80 "${ncu_app[@]}" --section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats \
    --section WarpStateStats --section InstructionStats \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum \
    -o "$N/core" "${probe[@]}" > "$N/core.log" 2>&1
  check "ncu $replay replay: launch, occupancy, scheduler, warp state (bf16 ${XB_NCU_SIZES:-256,16384})" \
    "exit $?, $((SECONDS - t0)) s$(grep -o 'ERR_NVGPUCTRPERM' "$N/core.log" | head -1 | sed 's/^/, /')"
  grep -E '^==(ERROR|WARNING)==' "$N/core.log" | sort | uniq -c | head -5
  if [ "$(left)" -ge 40 ]; then
    t1=$SECONDS
    timeout "$(left)" "${ncu_app[@]}" --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section SourceCounters -o "$N/memory_source" "${probe[@]}" > "$N/memory_source.log" 2>&1
    check "ncu $replay replay: memory tables, source counters" "exit $?, $((SECONDS - t1)) s"
    grep -E '^==(ERROR|WARNING)==' "$N/memory_source.log" | sort | uniq -c | head -5
  else
    check "ncu $replay replay: memory tables, source counters" "skipped: $((SECONDS - t0)) s into the step"
  fi
  raws=()
  for r in core memory_source; do
    [ -f "$N/$r.ncu-rep" ] && ncu --import "$N/$r.ncu-rep" --page raw --csv --print-units base > "$N/$r.raw.csv" 2>&1 &&
      raws+=(--raw "$N/$r.raw.csv")
  done
  python3 tools/lab/add_ncu_compare.py compare --replay "$replay" --manifest "$N/probe.json" "${raws[@]}" > "$N/add_ncu_compare.md" 2> "$N/compare.err"
  check "add_ncu_compare.py compare ($(( ${#raws[@]} / 2 )) raw pages)" "exit $?$(head -1 "$N/compare.err" | sed 's/^/: /')"
  rep=$N/memory_source.ncu-rep
  [ -f "$rep" ] || rep=$N/core.ncu-rep
  for k in vectorized_elementwise_kernel add_flat_kernel add_lean_kernel; do  # the first launch of each: the first size
    src=(ncu --import "$rep" --page source --print-source sass --csv --kernel-name "regex:$k")
    "${src[@]}" --launch-count 1 > "$N/sass_$k.csv" 2>&1
    grep -q '"Source"' "$N/sass_$k.csv" || "${src[@]}" > "$N/sass_$k.csv" 2>&1  # without --launch-count: every launch
  done
  cuobjdump -sass "$B/libxb_add_shim.so" | c++filt > "$N/shim_all.sass" 2> "$N/cuobjdump.err"
  python3 tools/lab/add_ncu_compare.py sass --match \
    'add_flat_kernel<__nv_bfloat16, \(xb::AddCachePolicy\)0>|add_lean_kernel<__nv_bfloat16, \(int\)128, \(xb::AddCachePolicy\)0' \
    "$N/shim_all.sass" > "$N/ours_bf16.sass" 2>> "$N/cuobjdump.err"
  check "cuobjdump -sass of the shim, bf16 flat and lean t128" "$(grep -c 'Function :' "$N/ours_bf16.sass") functions"
  torch_lib=$(python3 -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))" 2>/dev/null)
  mangled=$(ncu --import "$rep" --page raw --csv --kernel-name-base mangled --metrics launch__grid_size 2>/dev/null |
    python3 -c "import csv, sys; print(next((r['Kernel Name'] for r in csv.DictReader(l for l in sys.stdin if l.startswith('\"')) if 'elementwise_kernel' in r.get('Kernel Name', '')), ''))")
  if [ "$(left)" -ge 20 ] && [ -f "$torch_lib" ] && [ -n "$mangled" ]; then
    t1=$SECONDS
    timeout "$(left)" cuobjdump -sass -fun "$mangled" "$torch_lib" > "$N/torch_cuobjdump.sass" 2>&1
    check "cuobjdump -sass -fun <PyTorch's kernel> libtorch_cuda.so" "exit $?, $((SECONDS - t1)) s, $(grep -c 'Function :' "$N/torch_cuobjdump.sass") functions"
  else
    check "cuobjdump of PyTorch's kernel" "skipped: $(left) s left, lib '${torch_lib}', kernel '${mangled:0:60}'"
  fi
  ops=("PyTorch=$N/sass_vectorized_elementwise_kernel.csv" "v1/t128/default=$N/sass_add_flat_kernel.csv"
       "v1/t128/default/lean=$N/sass_add_lean_kernel.csv")
  { echo; echo "## SASS opcodes at n = $first_n (ncu source pages; static count per kernel, then executed)"; echo
    python3 tools/lab/add_ncu_compare.py opcodes "${ops[@]}"; } >> "$N/add_ncu_compare.md" 2>> "$N/compare.err"
  check "add_ncu_compare.py opcodes (ncu source pages)" "exit $?"
  cp "$N/add_ncu_compare.md" "$OUT/"
  if ls "$N"/*.ncu-rep > /dev/null 2>&1; then (cd "$N" && tar czf "$OUT/add_ncu_reports.tar.gz" ./*.ncu-rep); fi
  cat "$N/add_ncu_compare.md"
  echo "ncu step: $((SECONDS - t0)) s"
fi
if ! skip variants; then
  # Issue 19, 3: the lean kernel (kernels/add.cu: block size and counts fixed at compile time or by
  # the host, no bounds check or tail where none is needed) against PyTorch's and v1/t128/default,
  # every size and dtype, bit-exact checks included. About 40 s.
  add_shim
  # shellcheck disable=SC2086  # XB_VARIANT_ARGS is split into arguments on purpose
  timeout 170 python3 -u tools/lab/add_vs_torch.py --shim $B/libxb_add_shim.so --out "$W/add_variants" --rounds 4 \
    --candidates v1/t128/default,v1/t128/default/lean,v1/t128/plain/lean,v1/t256/default/lean,v1/t256/plain/lean \
    ${XB_VARIANT_ARGS:-} > "$W/add_variants.log" 2>&1
  check "add_vs_torch.py lean candidates (4 rounds; exit 1: an output differs)" "exit $?, $(grep -E '^(setup|round 3):' "$W/add_variants.log" | tr '\n' ' ')"
  cat "$W/add_variants/add_vs_torch.md" 2>/dev/null || tail -5 "$W/add_variants.log"
fi
if ! skip env; then
  # Issue 19, 4: the DRAM-bound ratio (4096^2, 16384^2) was 1.003-1.008 on two H200s and 1.02-1.03
  # on a third (speed-2026-12-01/run9, run without this script's LD_LIBRARY_PATH). The same
  # comparison twice in one call, on one GPU: with the toolkit's libraries first on
  # LD_LIBRARY_PATH (as every step above) and without; add_vs_torch.md names the GPU's UUID and
  # the CUDA runtime, CUPTI and driver libraries each process mapped. About 1 min.
  add_shim
  for ld in toolkit none; do
    runner=(env)
    [ "$ld" = none ] && runner=(env -u LD_LIBRARY_PATH)
    timeout 120 "${runner[@]}" python3 -u tools/lab/add_vs_torch.py --shim $B/libxb_add_shim.so --out "$W/add_env_$ld" \
      --rounds 4 --sizes 4096,16384 --candidates v1/t128/default/lean > "$W/add_env_$ld.log" 2>&1
    check "add_vs_torch.py 4096, 16384, LD_LIBRARY_PATH: $ld" "exit $?"
    sed -n '/^GPU /p;/^| n |/,/^$/p' "$W/add_env_$ld/add_vs_torch.md" 2>/dev/null || tail -3 "$W/add_env_$ld.log"
  done
fi
if ! skip cold; then
  # Issue 15: cold mode is batched (one flush, then each instance once): event vs CUPTI per call
  # must hold without the one-call allowance, for bench's ops and a user's program alike.
  timeout 120 $B/bench --op add,matmul --size 64,4096 --mode cold --warmup --out "$W/cold" > "$W/cold.log" 2>&1
  check "bench --op add,matmul --size 64,4096 --mode cold --warmup" "exit $?, $(grep -E '^(PASSED|FAILED)' "$W/cold.log" | head -1)"
  grep -E "event_vs_cupti|\(cold\)" "$W/cold/summary.md" 2>/dev/null | head -8
  OUT=$W/user XB_SKIP_CMDS=1 timeout 200 bash tools/lab/h200_core.sh user > "$W/user.log" 2>&1
  check "tools/lab/h200_core.sh user (saxpy hot and cold, installed package)" "exit $?"
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
tar czf "$OUT/speed.tar.gz" --exclude='*.ncu-rep' -C "$W" .
ls -la "$OUT"
