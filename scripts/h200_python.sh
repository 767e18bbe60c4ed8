#!/usr/bin/env bash
# Issue 20 (crossbench from Python) on the H200 machine, through the device tool:
#   bash scripts/h200_python.sh
# 1. pip-installs the package from bench/python into $W/site (scikit-build-core and nanobind are
#    already in the H200's python3; no network: --no-build-isolation --no-deps; --target, since
#    Ubuntu 24.04's system Python refuses plain installs, PEP 668) and, at the same time, builds
#    `validate` in build-h200 (the GPU test re-validates each run folder with it);
# 2. runs the GPU test tests/gpu/test_python_gpu.py against the installed package (torch add and
#    matmul, a Triton kernel, cold-mode rotation, a torch.cuda.Stream, the callable's exception,
#    torch.profiler beside it);
# 3. runs scripts/py_side_by_side.py (crossbench, do_bench, torch.utils.benchmark.Timer, a naive
#    event pair, CUPTI's kernel time as the reference; "done when" per row).
# $OUT: checks.txt, side_by_side.md, side_by_side.json, gpu_test.txt, python-results.tar.gz
# (logs and the run folders without their traces). XB_PY_ROUNDS=N sets the side-by-side rounds (3).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
h200_workdir /tmp/xb-python site
check() { printf '%-60s %s\n' "$1" "$2" | tee -a "$OUT/checks.txt"; }
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import sys, torch, nanobind, scikit_build_core; print('python', sys.version.split()[0], 'torch', torch.__version__,
'cuda', torch.version.cuda, 'nanobind', nanobind.__version__, 'scikit-build-core', scikit_build_core.__version__)"
  python3 -c "import triton; print('triton', triton.__version__)"; } > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

# 1. Both builds at once, 8 jobs each.
t0=$(date +%s)
( CMAKE_BUILD_PARALLEL_LEVEL=8 timeout 240 python3 -m pip install --no-build-isolation --no-deps --target "$W/site" \
    -C build-dir="$W/skbuild" bench/python > "$W/pip_install.log" 2>&1; echo $? > "$W/pip_install.rc" ) &
{ cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DXB_PYTHON3:FILEPATH="$(command -v python3)" &&
  timeout 240 cmake --build build-h200 -j 8 --target validate; } > "$W/validate_build.log" 2>&1
check "build validate (build-h200)" "exit $?"
wait
check "pip install bench/python (--target, $(( $(date +%s) - t0 )) s for both builds)" "exit $(cat "$W/pip_install.rc")"
ls "$W"/site/crossbench/ >> "$W/pip_install.log" 2>&1
if ! ls "$W"/site/crossbench/_core*.so > /dev/null 2>&1; then
  tail -40 "$W/pip_install.log"
  tar czf "$OUT/python-results.tar.gz" -C "$W" machine.txt pip_install.log validate_build.log 2>/dev/null
  exit 1
fi

# 2. The GPU test, against the installed package.
timeout 150 python3 tests/gpu/test_python_gpu.py "$W/site" build-h200/validate > "$OUT/gpu_test.txt" 2>&1
check "tests/gpu/test_python_gpu.py (installed package)" "exit $?, $(grep -c '^ok:' "$OUT/gpu_test.txt") ok, $(grep -c '^FAIL' "$OUT/gpu_test.txt") FAIL"

# 3. Side by side.
PYTHONPATH="$W/site" timeout 200 python3 scripts/py_side_by_side.py --out "$W/side" --rounds "${XB_PY_ROUNDS:-3}" \
  > "$W/side_by_side.log" 2>&1
check "scripts/py_side_by_side.py (exit 0: every done-when row agrees)" "exit $?"
cp "$W/side/side_by_side.md" "$W/side/side_by_side.json" "$OUT/" 2>/dev/null
tar czf "$OUT/python-results.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  -C "$W" machine.txt pip_install.log validate_build.log side_by_side.log side 2>/dev/null
echo; cat "$OUT/checks.txt"; echo; cat "$OUT/side_by_side.md" 2>/dev/null; grep -E '^(FAIL|SKIPPED)' "$OUT/gpu_test.txt"
