#!/usr/bin/env bash
# Issue 20 (crossbench from Python) on the H200 machine, through the device tool:
#   bash tools/lab/h200_python.sh
# 1. pip-installs the package from bench/python into $W/site (scikit-build-core and nanobind are
#    already in the H200's python3; no network: --no-build-isolation --no-deps; --target, since
#    Ubuntu 24.04's system Python refuses plain installs, PEP 668) and, at the same time, builds
#    `validate` in build-h200 (the GPU test re-validates each run folder with it);
# 2. runs the GPU test tests/gpu/test_python_gpu.py against the installed package (torch add and
#    matmul, a Triton kernel, cold-mode rotation, a torch.cuda.Stream, the callable's exception,
#    torch.profiler beside it);
# 3. runs tools/lab/py_side_by_side.py (crossbench, do_bench, torch.utils.benchmark.Timer, a naive
#    event pair, CUPTI's kernel time as the reference; "done when" per row).
# A step that crashes (exit 134 SIGABRT, 135 SIGBUS, 139 SIGSEGV) runs once more for its native
# stack, every thread: under gdb where it exists, else with a backtrace handler preloaded
# (catchsegv and libSegFault.so left glibc in 2.35) and Python's faulthandler; crash_*.txt says
# which. The whole script takes about 3 minutes; a crash adds its re-run (90 s at most each).
# $OUT: checks.txt, side_by_side.md, side_by_side.json, gpu_test.txt, crash_*.txt (only after a
# crash), python-results.tar.gz (logs and the run folders without their traces).
# XB_PY_ROUNDS=N sets the side-by-side rounds (3).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-python site
# native_trace NAME SECONDS CMD...: CMD again, for the native stack of its crash, into
# $OUT/crash_NAME.txt (first line: the tool used).
native_trace() {
  local name=$1 secs=$2 log="$OUT/crash_$1.txt"
  shift 2
  if command -v gdb > /dev/null; then
    echo "native backtrace: gdb -batch (every thread)" > "$log"
    timeout "$secs" gdb -q -batch -ex 'set pagination off' -ex 'handle SIGPIPE SIGUSR1 SIGUSR2 nostop noprint pass' \
      -ex run -ex 'info sharedlibrary' -ex 'thread apply all bt 40' --args "$@" >> "$log" 2>&1
  else
    echo "native backtrace: no gdb; LD_PRELOAD backtrace handler (crashing thread) + python3 -X faulthandler (every thread)" > "$log"
    cat > "$W/xb_crash.c" <<'SRC'
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_crash(int sig) {
  void* frames[64];
  char head[96];
  int n = snprintf(head, sizeof head, "xb_crash: signal %d (%s) in thread %ld; native frames:\n", sig, strsignal(sig), (long)gettid());
  write(2, head, (size_t)n);
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  signal(sig, SIG_DFL);
  raise(sig);
}
__attribute__((constructor)) static void install(void) {
  void* warm[1];
  backtrace(warm, 1);  /* loads libgcc_s now, not inside the handler */
  signal(SIGSEGV, on_crash); signal(SIGABRT, on_crash); signal(SIGBUS, on_crash);
}
SRC
    if gcc -shared -fPIC -O1 -o "$W/libxb_crash.so" "$W/xb_crash.c" >> "$log" 2>&1; then
      LD_PRELOAD="$W/libxb_crash.so" timeout "$secs" python3 -X faulthandler "${@:2}" >> "$log" 2>&1
    else
      timeout "$secs" python3 -X faulthandler "${@:2}" >> "$log" 2>&1
    fi
  fi
  echo "exit $? (frames 'lib.so(+0xOFF)': addr2line -f -C -e lib.so 0xOFF)" >> "$log"
  echo "crash in $name: native stack in $log"; grep -m 12 -E '^(#|Thread|xb_crash|Fatal Python|  File)' "$log"
}
crashed() { [ "$1" = 134 ] || [ "$1" = 135 ] || [ "$1" = 139 ]; }
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
# -u: unbuffered, so that the lines before a crash are in the log.
timeout 100 python3 -u tests/gpu/test_python_gpu.py "$W/site" build-h200/validate > "$OUT/gpu_test.txt" 2>&1
rc=$?
check "tests/gpu/test_python_gpu.py (installed package)" "exit $rc, $(grep -c '^ok:' "$OUT/gpu_test.txt") ok, $(grep -c '^FAIL' "$OUT/gpu_test.txt") FAIL"
crashed "$rc" && native_trace gpu_test 90 python3 -u tests/gpu/test_python_gpu.py "$W/site" build-h200/validate

# 3. Side by side.
export PYTHONPATH="$W/site"
timeout 130 python3 -u tools/lab/py_side_by_side.py --out "$W/side" --rounds "${XB_PY_ROUNDS:-3}" > "$W/side_by_side.log" 2>&1
rc=$?
check "tools/lab/py_side_by_side.py (exit 0: every done-when row agrees)" "exit $rc"
crashed "$rc" && rm -rf "$W/side-crash" && native_trace side_by_side 60 python3 -u tools/lab/py_side_by_side.py --out "$W/side-crash" --rounds 1
cp "$W/side/side_by_side.md" "$W/side/side_by_side.json" "$OUT/" 2>/dev/null
tar czf "$OUT/python-results.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  -C "$W" machine.txt pip_install.log validate_build.log side_by_side.log side 2>/dev/null
echo; cat "$OUT/checks.txt"; echo; cat "$OUT/side_by_side.md" 2>/dev/null; grep -E '^(FAIL|SKIPPED)' "$OUT/gpu_test.txt"
