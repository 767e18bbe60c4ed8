#!/usr/bin/env python3
"""crossbench.bench after a device fault or a hung kernel (issue 36 item 5; ctest label gpu).

Each case runs in a Python process of its own (the CUDA context is lost after it): a CuPy kernel
that writes to address 0x8 (cudaErrorIllegalAddress), and one that spins on a flag nobody sets
(XB_WAIT_DEADLINE_S=3). Checked: crossbench.bench raises RuntimeError with the one line (the
fixture, the error or the limit, the run folder, the advice), the run folder holds the fixture with
that error, the process lives on (no exit), and a second crossbench.bench raises at once, saying
the process's CUDA cannot be used any more; within a bounded time.

Usage: test_python_fault_gpu.py PACKAGE_DIR
Skips (exit 77, "SKIPPED:"/"no CUDA device") without a GPU or CuPy.
"""
import json
import os
import subprocess
import sys
import tempfile

PKG = os.path.abspath(sys.argv[1])
sys.path.insert(0, PKG)
import crossbench  # noqa: E402

reason = crossbench.device_error()
if reason:
    print(f"SKIPPED: {reason}")  # "no CUDA device found (...)": ctest's skip expression
    sys.exit(77)
try:
    import cupy  # noqa: F401
except ImportError:
    print("SKIPPED: cupy is not installed for " + sys.executable)
    sys.exit(77)

# The child: one crossbench.bench of a faulting or hanging CuPy kernel on the legacy default stream
# (crossbench's stream when torch is not imported, and CuPy's default), then a second call.
CHILD = r'''
import os, sys
sys.path.insert(0, sys.argv[3])
import cupy, crossbench
if sys.argv[1] == "fault":
    k = cupy.RawKernel(r'extern "C" __global__ void k(int* p, int go) { if (go) *p = 1; }', "k")
    fn = lambda: k((1,), (1,), (cupy.uint64(8), cupy.int32(1)))
else:
    flag = cupy.zeros(1, dtype=cupy.int32)
    k = cupy.RawKernel(r'extern "C" __global__ void k(const volatile int* f) { while (*f == 0) {} }', "k")
    fn = lambda: k((1,), (1,), (flag,))
try:
    crossbench.bench(fn, name="f", out=sys.argv[2], min_time_s=0.1, max_time_s=0.3, warmup=False)
    print("FIRST: no exception")
except RuntimeError as e:
    print("FIRST: " + str(e))
try:
    crossbench.bench(lambda: None, name="g", min_time_s=0.1, max_time_s=0.3, warmup=False)
    print("SECOND: no exception")
except RuntimeError as e:
    print("SECOND: " + str(e))
sys.stdout.flush()
os._exit(0)  # after a hang the CUDA runtime's teardown at exit would wait for the kernel forever
'''

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run_case(kind, env_extra):
    out = os.path.join(tempfile.mkdtemp(prefix=f"xb-py-{kind}-"), "run")
    env = dict(os.environ, **env_extra)
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, kind, out, PKG], capture_output=True, text=True, env=env,
                           timeout=120)
    except subprocess.TimeoutExpired:
        check(False, f"{kind}: the process ended within 120 s")
        return None, None, out
    lines = p.stdout.splitlines()
    first = next((l[len("FIRST: "):] for l in lines if l.startswith("FIRST: ")), "")
    second = next((l[len("SECOND: "):] for l in lines if l.startswith("SECOND: ")), "")
    check(p.returncode == 0, f"{kind}: the process lived on and exited 0 (exit {p.returncode})\n{p.stdout}\n{p.stderr}")
    return first, second, out


def error_of(out, name):
    try:
        with open(os.path.join(out, "events.json")) as f:
            return next((x.get("error", "") for x in json.load(f)["fixtures"] if x["name"] == name), None)
    except (OSError, ValueError, KeyError) as e:
        return f"unreadable events.json: {e}"


first, second, out = run_case("fault", {})
if first is not None:
    check(first.startswith("crossbench: f/fp32/1: device fault: cudaErrorIllegalAddress: "), f"fault: the line: {first}")
    check("; the CUDA context is lost, so 0 fixtures did not run (none); the 0 fixtures before it are written to "
          f"{out} and validated; find the fault with compute-sanitizer " in first, f"fault: the line's rest: {first}")
    check((error_of(out, "f/fp32/1") or "").startswith("device fault: cudaErrorIllegalAddress"),
          f"fault: events.json records the fixture's error ({error_of(out, 'f/fp32/1')})")
    check(second.startswith("crossbench: the CUDA context of this process was lost in an earlier run "
                            "(cudaErrorIllegalAddress)"), f"fault: a second bench says the context is lost: {second}")

first, second, out = run_case("hang", {"XB_WAIT_DEADLINE_S": "3"})
if first is not None:
    check(first.startswith("crossbench: f/fp32/1: a call did not finish within 3 s (a hung kernel?); the device "
                           "stays busy with it, so 0 fixtures did not run (none); "), f"hang: the line: {first}")
    check("find where it hangs with cuda-gdb --args " in first, f"hang: the advice: {first}")
    check(error_of(out, "f/fp32/1") == "a call did not finish within 3 s (a hung kernel?)",
          f"hang: events.json records the fixture's error ({error_of(out, 'f/fp32/1')})")
    check(second.startswith("crossbench: a call of an earlier run did not finish within 3 s"),
          f"hang: a second bench says the device is busy: {second}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
