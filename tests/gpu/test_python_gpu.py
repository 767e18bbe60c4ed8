#!/usr/bin/env python3
"""crossbench.bench on the GPU (issue 20; ctest label gpu): PyTorch and Triton callables timed with
crossbench's method and validated.

Checked: torch.add (bf16, 1024^2) and torch.matmul (bf16, 64) in hot mode: the run folder
validates, CUPTI recorded, the per-call event median agrees with CUPTI's within max(0.5 us, 1%),
the kernels' CUPTI time is positive and at most the event time, `validate RUN_DIR` passes again;
a small Triton add kernel the same way; cold mode with three input copies rotates through them;
a torch.cuda.Stream argument is the stream timed; an exception raised by the callable during
the run is the caller's exception; Python's SIGINT handler is back after a run; while
torch.profiler records, bench falls back to events only with a one-line note, torch.profiler still
sees its kernels, and the next bench records with CUPTI again.

Usage: test_python_gpu.py PACKAGE_DIR VALIDATE_EXE
Skips (exit 77, "SKIPPED:"/"no CUDA device") without a GPU, torch or triton (the Triton part alone).
"""
import json
import os
import signal
import subprocess
import sys

PKG, VALIDATE = (os.path.abspath(a) for a in sys.argv[1:3])
sys.path.insert(0, PKG)
import crossbench  # noqa: E402

reason = crossbench.device_error()
if reason:
    print(f"SKIPPED: {reason}")  # "no CUDA device found (...)": ctest's skip expression
    sys.exit(77)
try:
    import torch
except ImportError:
    print("SKIPPED: torch is not installed for " + sys.executable)
    sys.exit(77)

failures = []
FAST = dict(min_time_s=0.2, max_time_s=1.0, warmup=False)  # quick runs: what is checked is agreement


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def check_run(r, what, agree=True):
    check(r.passed, f"{what}: validation passed ({r.verdict})")
    check(r.cupti, f"{what}: CUPTI recorded ({r.note})")
    if agree:
        check(r.agree is True, f"{what}: event {r.event_ns:.1f} ns vs CUPTI {r.cupti_ns} ns per call, "
                               f"|diff| {r.diff_ns} <= {r.tolerance_ns}")
    check(r.cupti_kernel_ns is not None and 0 < r.cupti_kernel_ns <= r.event_ns * 1.01,
          f"{what}: CUPTI kernel time {r.cupti_kernel_ns} ns in (0, event]")
    if os.path.exists(VALIDATE):  # the run validated itself; the binary reads the folder again
        v = subprocess.run([VALIDATE, r.run_dir, "--report", os.path.join(r.run_dir, "revalidation.json")],
                           capture_output=True, text=True)
        check(v.returncode == 0, f"{what}: validate {r.run_dir} exit {v.returncode}")
    print("      " + str(r))


dev = torch.device("cuda")
bf16 = torch.bfloat16
a, b = (torch.randn(1024, 1024, device=dev, dtype=bf16) for _ in range(2))
r = crossbench.bench(lambda: torch.add(a, b), name="torch_add", dtype="bf16", size=1024, bytes=3 * a.nbytes, **FAST)
check_run(r, "torch.add bf16 1024^2")
add_kernel_ns = r.cupti_kernel_ns  # CUPTI's kernel time of torch.add 1024^2, before any torch.profiler
check(r.gbps > 0 and r.calls_per_sample > 1, f"hot batches: {r.calls_per_sample} calls per sample, {r.gbps:.0f} GB/s")

x, y = (torch.randn(64, 64, device=dev, dtype=bf16) for _ in range(2))
r = crossbench.bench(lambda: torch.matmul(x, y), name="torch_matmul", dtype="bf16", size=64, flops=2 * 64 ** 3, **FAST)
check_run(r, "torch.matmul bf16 64")

# A callable that synchronizes (.item() copies to the host and waits): detected and timed without
# the blocking kernel (issue 30), and the same declared with sync=True; both validate.
s_in = torch.randn(1 << 20, device=dev)
r = crossbench.bench(lambda: torch.sum(s_in).item(), name="sum_item", size=1 << 20, **FAST)
check(r.sync == "detected", f"a synchronizing callable is detected (timing.sync {r.sync!r})")
check_run(r, "torch.sum(...).item() detected")
detected = r
r = crossbench.bench(lambda: torch.sum(s_in).item(), name="sum_item_declared", size=1 << 20, sync=True, **FAST)
check(r.sync == "declared", f"sync=True declares it (timing.sync {r.sync!r})")
check_run(r, "torch.sum(...).item() declared")


def timing(res):
    """The fixture's events.json timing block."""
    with open(os.path.join(res.run_dir, "events.json")) as f:
        return json.load(f)["fixtures"][0]["timing"]


# Declared and detected, the same method: both checked and timed without the blocking kernel. Their
# figures are two fixtures of a host-bound callable run one after the other (.item() waits for the
# device and copies to the host each call): they differ by a few percent from fixture to fixture,
# beyond each one's interval, which states the precision within a run (docs/metrics.md, "Run to
# run"); printed, not asserted.
td, tr = timing(detected), timing(r)
check(not td["blocking"] and not tr["blocking"], "declared and detected are both timed without the blocking kernel")
check(tr.get("sync_declared") is True and not td.get("sync_declared", False), "events.json records the declaration")
print(f"      declared {r.event_ns:.0f} ns, detected {detected.event_ns:.0f} ns per call")

# Cold mode with three copies of the inputs: the callables are the rotation.
copies = [(torch.randn(1024, 1024, device=dev, dtype=bf16), torch.randn(1024, 1024, device=dev, dtype=bf16))
          for _ in range(3)]
fns = [lambda p=p, q=q: torch.add(p, q) for p, q in copies]
r = crossbench.bench(fns, mode="cold", name="torch_add_cold", dtype="bf16", size=1024, bytes=3 * a.nbytes, **FAST)
check_run(r, "cold torch.add, 3 copies")
check(r.rotation == 3, f"cold: rotation {r.rotation} ({r.calls_per_sample} calls per sample)")
r = crossbench.bench(fns[0], mode="cold", name="torch_add_cold1", dtype="bf16", size=1024, **FAST)
check("not rotated" in r.note, f"cold with one callable says so: {r.note!r}")

# A stream of the caller's: torch's current stream during the run.
s = torch.cuda.Stream()
r = crossbench.bench(lambda: torch.add(a, b), stream=s, name="torch_add_stream", dtype="bf16", size=1024, **FAST)
check_run(r, "torch.add on a torch.cuda.Stream")

# The callable's own exception, raised during the timed run (not the priming call).
calls = [0]


def fails_later():
    calls[0] += 1
    if calls[0] > 5:
        raise KeyError("raised by the callable")
    return torch.add(a, b)


try:
    crossbench.bench(fails_later, name="fails_later", **FAST)
    check(False, "an exception of the callable propagates")
except KeyError as e:
    check("raised by the callable" in str(e), f"an exception of the callable propagates: KeyError {e}")
check(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Python's SIGINT handler is back")

# Beside torch.profiler: it holds CUPTI while it records.
from torch.profiler import ProfilerActivity, profile  # noqa: E402

# A short run (torch.profiler records each of its kernels too, and processes them all afterwards).
FEW = dict(warmup=False, batch=4, min_samples=10, min_time_s=0.0, max_time_s=0.05, wait_steps=0, warmup_steps=0,
           active_steps=5)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    torch.add(a, b)
    r = crossbench.bench(lambda: torch.add(a, b), name="under_torch_profiler", dtype="bf16", size=1024, **FEW)
    torch.cuda.synchronize()
check(not r.cupti and r.agree is None and "torch.profiler" in r.note, f"under torch.profiler: events only ({r.note})")
check(r.event_ns > 0, f"under torch.profiler: event {r.event_ns:.1f} ns per call")
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
check(len(kernels) > 0, f"torch.profiler still recorded its kernels ({len(kernels)})")
with profile(activities=[ProfilerActivity.CUDA]) as prof2:  # after crossbench's CUPTI sessions
    torch.add(a, b)
    torch.cuda.synchronize()
kernels2 = [e for e in prof2.events() if e.device_type == torch.autograd.DeviceType.CUDA]
check(len(kernels2) > 0, f"a torch.profiler started after crossbench's runs records kernels ({len(kernels2)})")
# Both sides' clocks stay right: CUPTI's timestamp source is process-wide, PyTorch's profiler sets
# one in TSC ticks and crossbench sets CUPTI's default (ns) again at its start. The same kernel
# must then take about as long in torch.profiler's trace and in crossbench's (each within 1.5x).
torch_kernel_ns = kernels2[0].device_time * 1e3 if kernels2 else 0.0
check(add_kernel_ns and 0.67 < torch_kernel_ns / add_kernel_ns < 1.5,
      f"torch.profiler after crossbench: torch.add kernel {torch_kernel_ns:.0f} ns vs crossbench's {add_kernel_ns} ns")
r = crossbench.bench(lambda: torch.add(a, b), name="after_torch_profiler", dtype="bf16", size=1024, **FAST)
check_run(r, "after torch.profiler")
check(r.cupti_kernel_ns and 0.67 < r.cupti_kernel_ns / add_kernel_ns < 1.5,
      f"after torch.profiler: crossbench's kernel time {r.cupti_kernel_ns} ns vs {add_kernel_ns} ns before it")

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None
    print("SKIPPED (Triton part): triton is not installed")
if triton is not None:
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = a.numel()
    out = torch.empty_like(a)

    def triton_add():
        add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)

    r = crossbench.bench(triton_add, name="triton_add", dtype="bf16", size=1024, bytes=3 * a.nbytes, **FAST)
    check_run(r, "Triton add bf16 1024^2")
    check(torch.allclose(out.float(), (a.float() + b.float()), rtol=1e-2, atol=1e-2), "the Triton kernel's output is right")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("python gpu: all checks passed")
