#!/usr/bin/env python3
"""crossbench's Python module (bench/python: crossbench._core, nanobind) on the CPU (issue 20).

Checked, with no GPU needed: the package built into <build>/python imports and never imports
torch; without a CUDA device, device_error() and bench() give the one-line "no CUDA device found
(...)" reason (a RuntimeError, nothing written); bad arguments are ValueError/TypeError before
any device is touched; and Result is read right from a run folder, here one replayed from the
recorded H200 session (bench --replay): every figure equals the one in events.json,
validation.json and table.json.

Usage: test_python_module.py PACKAGE_DIR BENCH_EXE REPO_ROOT
Exit 0 pass, 1 fail, 77 "SKIPPED: why" when the module was not built (no nanobind at configure).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

PKG, BENCH, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
if not glob.glob(os.path.join(PKG, "crossbench", "_core*.so")):
    print(f"SKIPPED: the module crossbench._core is not in {PKG}/crossbench: nanobind was not found when CMake "
          f"configured the build (scripts/test.sh installs it into <build>/.venv and rebuilds)")
    sys.exit(77)
sys.path.insert(0, PKG)
import crossbench  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


check("torch" not in sys.modules, "import crossbench imported torch")
check(os.path.dirname(crossbench.__file__) == os.path.join(PKG, "crossbench"), f"imported {crossbench.__file__}")

# __version__ is the CMake project's VERSION (compiled into _core: no second copy to forget),
# the one `bench --version` prints.
import re  # noqa: E402
with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
    cmake_version = re.search(r"project\(crossbench VERSION ([0-9.]+)", f.read()).group(1)
check(crossbench.__version__ == cmake_version, f"__version__ {crossbench.__version__!r}, CMakeLists.txt says {cmake_version!r}")
bench_version = subprocess.run([BENCH, "--version"], capture_output=True, text=True).stdout
check(crossbench.__version__ in bench_version, f"__version__ {crossbench.__version__!r}, bench --version says {bench_version!r}")
# __all__ is the public API, each name there; the standard-library modules the package uses are
# private (_json, _os, ...) and so are its submodules (_bench, _check, _core), so the public
# namespace is __all__ and nothing else.
check(crossbench.__all__ == ["bench", "Result", "device_error", "check_files", "check_profile", "export_profile", "handler",
                             "Verdict", "ValidateError"], f"__all__ = {crossbench.__all__}")
check(all(hasattr(crossbench, n) for n in crossbench.__all__), "a name in __all__ is missing")
public = {n for n in vars(crossbench) if not n.startswith("_")}
check(public == set(crossbench.__all__), f"public names {sorted(public)} are not __all__")
for mod in ("json", "os", "re", "sys", "tempfile", "dataclasses"):
    check(not hasattr(crossbench, mod), f"crossbench.{mod} is public")
star = {}
exec("from crossbench import *", star)
check(set(star) - {"__builtins__"} == set(crossbench.__all__), f"import * gave {sorted(star)}")

# Bad arguments: refused before the device is looked at, so the same on every machine.
for kwargs, exc in (({"mode": "warm"}, ValueError), ({"dtype": "int8"}, ValueError), ({"size": 0}, ValueError),
                    ({"flops": -1.0}, ValueError), ({"stream": "s"}, TypeError)):
    try:
        crossbench.bench(lambda: None, **kwargs)
        failures.append(f"bench(**{kwargs}) did not raise")
    except exc as e:
        check("\n" not in str(e) and str(e), f"bench(**{kwargs}): {type(e).__name__} {e!r} is not one line")
for bad in ([], [1], "not callable"):
    try:
        crossbench.bench(bad)
        failures.append(f"bench({bad!r}) did not raise")
    except TypeError:
        pass

# torch.profiler seen recording (the fallback to events only), and the stream argument, with stand-ins
# for torch (the real one is the GPU test's).
from types import SimpleNamespace as NS  # noqa: E402


def fake_torch(flag, state):
    return NS(autograd=NS(profiler=NS(_is_profiler_enabled=flag)), _C=NS(_autograd=NS(_profiler_enabled=lambda: state)),
              cuda=NS(current_stream=lambda: NS(cuda_stream=1234)))


check(crossbench._bench._torch_profiler_recording(fake_torch(True, False)), "torch.profiler's flag is seen")
check(crossbench._bench._torch_profiler_recording(fake_torch(False, True)), "the profiler state is seen")
check(not crossbench._bench._torch_profiler_recording(fake_torch(False, False)), "no profiler: not recording")
check(not crossbench._bench._torch_profiler_recording(NS()), "a torch without those names: not recording")
check(crossbench._bench._stream_handle(None, fake_torch(False, False)) == 1234, "None: torch's current stream")
check(crossbench._bench._stream_handle(None, None) == 0, "None without torch: the legacy default stream")
check(crossbench._bench._stream_handle(NS(cuda_stream=77), None) == 77, "an object with .cuda_stream")
check(crossbench._bench._stream_handle(5, None) == 5, "an int")

reason = crossbench.device_error()
if reason:
    check(reason.startswith("no CUDA device found (") and "\n" not in reason, f"device_error() = {reason!r}")
    out = tempfile.mkdtemp(prefix="xb-py-nodev-")
    called = []
    try:
        crossbench.bench(lambda: called.append(1), out=out)
        failures.append("bench() without a device did not raise")
    except RuntimeError as e:
        check(str(e) == reason, f"bench() without a device: {e!r}, expected {reason!r}")
    check(not called, "the callable was called without a device")
    check(os.listdir(out) == [], f"bench() without a device wrote {os.listdir(out)}")
    os.rmdir(out)
else:
    print("note: a CUDA device is present; the no-device checks are the GPU test's opposite (test_python_gpu.py)")

# Result from a run folder: the replayed H200 session (add/bf16/64 recorded with CUPTI).
with tempfile.TemporaryDirectory(prefix="xb-py-replay-") as tmp:
    run = os.path.join(tmp, "run")
    proc = subprocess.run([BENCH, "--replay", os.path.join(ROOT, "results", "sessions", "h200-small-2026-11-29", "raw_session.json"),
                           "--out", run], capture_output=True, text=True, cwd=ROOT)
    check(proc.returncode in (0, 1), f"bench --replay exited {proc.returncode}: {proc.stderr}")
    events = json.load(open(os.path.join(run, "events.json")))
    validation = json.load(open(os.path.join(run, "validation.json")))
    rows = json.load(open(os.path.join(run, "table.json")))["rows"]
    name = "add/bf16/64"
    fx = next(f for f in events["fixtures"] if f["name"] == name)
    fig = next(g for g in validation["figures"]["event_vs_cupti"] if g["fixture"] == name)
    row = next(r for r in rows if r["name"] == "xb::add")
    r = crossbench._bench._read_result(run, name, "hot", True, "", "", 0.0, 3 * 64 * 64 * 2.0)
    check(r.event_ns == fx["stats"]["median_ns"], f"event_ns {r.event_ns} != {fx['stats']['median_ns']}")
    check(r.cupti_ns == fig["cupti_median_ns"], f"cupti_ns {r.cupti_ns} != {fig['cupti_median_ns']}")
    check(r.cupti_kernel_ns == row["cuda_time_avg_ns"], f"cupti_kernel_ns {r.cupti_kernel_ns}")
    check(r.diff_ns == fig["abs_diff_median_ns"] and r.tolerance_ns == fig["tolerance_ns"], "diff/tolerance")
    check(r.agree == (fig["abs_diff_median_ns"] <= fig["tolerance_ns"]), f"agree {r.agree}")
    check(r.samples == fx["stats"]["count"] and r.noise == fx["stats"]["rsd"], "samples/noise")
    check(r.calls_per_sample == fx["timing"]["launches_per_sample"], "calls_per_sample")
    check(r.passed == validation["passed"] and r.verdict == validation["verdict"], "passed/verdict")
    check(abs(r.event_us * 1e3 - r.event_ns) < 1e-6 and abs(r.cupti_us * 1e3 - r.cupti_ns) < 1e-6, "us conveniences")
    check(abs(r.gbps - 3 * 64 * 64 * 2.0 / r.event_ns) < 1e-9, f"gbps {r.gbps}")
    line = str(r)
    check(line.startswith(f"{name} (hot): event ") and "\n" not in line and run in line, f"str(Result) = {line!r}")
    # Events only: no CUPTI figures, agreement not claimed.
    e = crossbench._bench._read_result(run, name, "hot", False, "CUPTI unavailable", "", 0.0, 0.0)
    check(e.cupti_kernel_ns is None and e.note == "CUPTI unavailable", "events-only result")
    # A failed fixture is an exception naming it and the folder.
    fx["error"] = "the callable raised ValueError: boom"
    json.dump(events, open(os.path.join(run, "events.json"), "w"))
    try:
        crossbench._bench._read_result(run, name, "hot", True, "", "", 0.0, 0.0)
        failures.append("a failed fixture did not raise")
    except RuntimeError as err:
        check("boom" in str(err) and run in str(err), f"failed fixture: {err}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("python module: all checks passed")
