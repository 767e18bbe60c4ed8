#!/usr/bin/env bash
# Issue 40 on the H200 machine, through the device tool (from the repository root, the cuda-bench
# wheel carried in .whl/, `carry: [".whl"]`):
#   bash tools/lab/h200_vs_nvbench.sh
# NVIDIA nvbench beside crossbench on the same kernels, in one call of about 9 minutes:
# 1. unpacks .whl/cuda_bench-*.whl (PyPI cuda-bench: nvbench's Python API and libnvbench for
#    CUDA 13) into $W/nvbench-wheel, and builds build-h200 (bench, validate, crossbench._core and,
#    with -DXB_NVBENCH=ON against the unpacked wheel, tools/lab/nvbench's xb_nvbench_ops);
# 2. two interleaved rounds on the one GPU. C++: xb_nvbench_ops (crossbench's four ops at 64 and
#    4096, bf16, under nvbench's cold and batch measurements, nvbench's defaults) and `bench --size
#    64,4096 --warmup` hot and `--mode cold`. Python: tools/lab/nvbench/py_vs_nvbench.py, the same
#    ops as torch callables through nvbench's Python API and through crossbench.bench hot and cold.
#    Round 1 runs nvbench first, round 2 last (C++ then Python in both), so that a drift of the GPU's
#    power state over the call shows as a difference between rounds. nvidia-smi samples the SM
#    clock, power and clock-event reasons every 200 ms during each step;
# 3. tools/lab/nvbench/side_by_side.py writes the table from the steps file.
# A step that no longer fits the time budget (XB_NV_BUDGET_S, default 540 s from the start, the
# build included) is not started: checks.txt says NOT RUN for it.
# $OUT: checks.txt, machine.txt (time, commit, GPU, driver, nvcc, torch, cuda-bindings, the
# sha256 of this runner and tools/lab/nvbench), side_by_side.md, side_by_side.json, vs-nvbench.tgz
# (steps.tsv, nvbench's JSON and console output, the run folders without their traces, the
# nvidia-smi CSVs, the build log), build.log (only when the build failed).
# Expected: build about 100 s; nvbench about 60 s a process (its cold stopping rule wants 0.5 s of
# summed GPU time, over 100,000 samples at size 64, each behind an L2 flush), bench 15-20 s a mode,
# crossbench.bench 30-40 s a mode: about 500 s in all. Where steps are NOT RUN, run the rest in a
# second call with XB_NV_PARTS=py (or cpp).
# XB_NV_ROUNDS (2), XB_NV_PARTS ("cpp py"), XB_NV_ARGS (more nvbench options for both nvbench
# steps, e.g. "--timeout 5"; default none: nvbench's own defaults).
# Written 2026-12-05 without device time: not run yet.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-vs-nvbench runs smi
: > "$OUT/checks.txt"
rounds=${XB_NV_ROUNDS:-2}
parts=${XB_NV_PARTS:-cpp py}
budget=${XB_NV_BUDGET_S:-540}
h200_machine "$OUT/machine.txt"
{
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  python3 -c "import cuda.bindings as b; print('cuda-bindings', b.__version__)" || echo "cuda-bindings: not importable"
  sha256sum tools/lab/h200_vs_nvbench.sh tools/lab/nvbench/* .whl/cuda_bench-*.whl
} >> "$OUT/machine.txt" 2>&1

phase "unpack the wheel, build"
wheels=(.whl/cuda_bench-*.whl)
if [ ! -f "${wheels[0]}" ] || ! python3 -m zipfile -e "${wheels[0]}" "$W/nvbench-wheel"; then
  check "cuda-bench wheel in .whl/ (carry .whl)" "MISSING: nothing timed"
  exit 1
fi
nv_dir=$W/nvbench-wheel
py3=$(command -v python3)
export XB_BUILD_DIR=build-h200 XB_JOBS=16
export XB_CMAKE_ARGS="-DXB_LAB=ON -DXB_PYTHON3:FILEPATH=$py3 -DXB_NVBENCH=ON -DXB_NVBENCH_DIR=$nv_dir"
# setup.sh configures a fresh build-h200 with XB_CMAKE_ARGS; a kept one gets them here.
# shellcheck disable=SC2086  # XB_CMAKE_ARGS: -D options, space-separated
[ -f build-h200/CMakeCache.txt ] && cmake -S . -B build-h200 $XB_CMAKE_ARGS > "$W/build.log" 2>&1
if ! XB_BUILD_TARGETS="bench validate xb_nvbench_ops _core" bash scripts/setup.sh >> "$W/build.log" 2>&1; then
  tail -40 "$W/build.log"
  cp "$W/build.log" "$OUT/"
  check "build (bench, validate, xb_nvbench_ops, crossbench._core)" "FAILED: build.log"
  exit 1
fi
check "build (bench, validate, xb_nvbench_ops, crossbench._core)" "ok ($(( $(date +%s) - t0 )) s)"
export PYTHONPATH=$PWD/build-h200/python:$nv_dir${PYTHONPATH:+:$PYTHONPATH}
# cuda.bench chooses its extension from cuda-bindings' version; the C++ side is CUDA 13, so is this.
export XB_NVBENCH_CUDA_MAJOR=13
# The clock-event field's name since driver 535; the older one before.
reasons=clocks_event_reasons.active
nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 || reasons=clocks_throttle_reasons.active

printf 'round\tpart\tharness\tmode\tpath\twall_s\texit\tsmi\n' > "$W/steps.tsv"
# step ROUND PART HARNESS MODE PATH SECONDS CMD...: CMD under `timeout` (twice SECONDS, the time it
# is expected to need, or what is left of the budget; nvbench always what is left), nvidia-smi sampling beside it, one line of
# steps.tsv (paths relative to $W); not started when fewer than SECONDS are left.
step() {
  local round=$1 part=$2 harness=$3 mode=$4 path=$5 secs=$6 name="r$1-$2-$3-${4/+/-}"
  shift 6
  local left=$(( budget - ($(date +%s) - t0) ))
  if [ "$left" -lt "$secs" ]; then
    check "round $round $part $harness $mode" "NOT RUN ($left s left of the budget, $secs s needed)"
    return
  fi
  phase "round $round: $part $harness $mode"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,$reasons --format=csv,nounits -lms 200 > "$W/smi/$name.csv" 2>&1 &
  local smi=$! s rc
  s=$(date +%s.%N)
  # nvbench writes its JSON only at its end: killed, it leaves nothing, so it gets what is left.
  local limit=$(( left < 2 * secs ? left : 2 * secs ))
  [ "$harness" = nvbench ] && limit=$left
  timeout "$limit" "$@" > "$W/$name.log" 2>&1
  rc=$?
  kill "$smi" 2> /dev/null
  wait "$smi" 2> /dev/null
  local wall
  wall=$(python3 -c "print(round($(date +%s.%N) - $s, 2))")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$part" "$harness" "$mode" "$path" "$wall" "$rc" "smi/$name.csv" >> "$W/steps.tsv"
  check "round $round $part $harness $mode" "exit $rc, $wall s"
}
# nvbench_step / crossbench_step ROUND PART [MODE]: one harness of one part.
nvbench_step() {
  local json=runs/r$1-$2-nvbench.json
  # shellcheck disable=SC2086  # XB_NV_ARGS: more nvbench options, space-separated
  if [ "$2" = cpp ]; then
    step "$1" cpp nvbench cold+batch "$json" 60 build-h200/xb_nvbench_ops -d 0 --json "$W/$json" ${XB_NV_ARGS:-}
  else
    step "$1" py nvbench cold+batch "$json" 60 python3 -u tools/lab/nvbench/py_vs_nvbench.py nvbench --json "$W/$json" -d 0 ${XB_NV_ARGS:-}
  fi
}
crossbench_step() {
  local dir=runs/r$1-$2-crossbench-$3
  if [ "$2" = cpp ]; then
    step "$1" cpp crossbench "$3" "$dir" 30 build-h200/bench --size 64,4096 --warmup --mode "$3" --out "$W/$dir"
  else
    step "$1" py crossbench "$3" "$dir" 45 python3 -u tools/lab/nvbench/py_vs_nvbench.py crossbench --mode "$3" --out "$W/$dir"
  fi
}

for r in $(seq 1 "$rounds"); do
  for part in $parts; do
    if [ $(( r % 2 )) = 1 ]; then
      nvbench_step "$r" "$part"; crossbench_step "$r" "$part" hot; crossbench_step "$r" "$part" cold
    else
      crossbench_step "$r" "$part" cold; crossbench_step "$r" "$part" hot; nvbench_step "$r" "$part"
    fi
  done
done

phase "table"
python3 tools/lab/nvbench/side_by_side.py "$W/steps.tsv" "$OUT" > "$W/side_by_side.log" 2>&1
check "tools/lab/nvbench/side_by_side.py" "exit $?: $(tail -1 "$W/side_by_side.log")"
tar czf "$OUT/vs-nvbench.tgz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  --exclude=nvbench-wheel -C "$W" . 2> /dev/null
phase "done"
echo
cat "$OUT/checks.txt"
echo
sed -n '/^## C++/,/^### Clocks/p' "$OUT/side_by_side.md" 2> /dev/null
