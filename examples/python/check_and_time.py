#!/usr/bin/env python3
"""crossbench from Python on a GPU, after `pip install bench/python` (docs/python.md):

1. times a torch callable (a bf16 matmul, and torch.add) with crossbench.bench: the event median
   per call, CUPTI's span and kernel time, whether they agree, the run folder validated;
2. profiles a matmul + add with torch.profiler and checks the profile with crossbench.check_profile
   (its trace and key_averages().table() exported, validated in this process);
3. the same under a wait/warmup/active schedule whose on_trace_ready is crossbench.handler.

    python3 examples/python/check_and_time.py OUT_DIR

Writes OUT_DIR/bench_<name>/ (the run folders), OUT_DIR/profile/ (trace.json, table.txt,
validation.json, validation.md), OUT_DIR/handler/step_<N>/ and OUT_DIR/summary.json (every
figure and verdict). Exit 0 when everything ran and crossbench's own runs validated (PyTorch's
profile verdicts are reported as found: its known defects are findings, not errors), 1 when a
crossbench run failed its validation, 2 when it could not run (no torch, no CUDA device).
"""
import json
import os
import sys

import crossbench


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "crossbench-check-and-time")
    print("crossbench %s from %s" % (crossbench.__version__, os.path.dirname(crossbench.__file__)))
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule
    except ImportError as e:
        print("check_and_time: PyTorch is not installed (%s)" % e, file=sys.stderr)
        return 2
    reason = crossbench.device_error()
    if reason or not torch.cuda.is_available():
        print("check_and_time: %s" % (reason or "torch sees no CUDA device"), file=sys.stderr)
        return 2
    print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)))
    os.makedirs(out, exist_ok=True)
    summary = {"crossbench": crossbench.__version__, "torch": torch.__version__,
               "device": torch.cuda.get_device_name(0), "bench": [], "profiles": []}

    # 1. Time torch callables: nothing in them synchronizes, so they run behind the blocking kernel.
    n = 4096
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    runs = [("torch_matmul", lambda: a @ b, dict(flops=2.0 * n ** 3)),
            ("torch_add", lambda: torch.add(a, b), dict(bytes=3.0 * a.nbytes))]
    ok = True
    for name, fn, work in runs:
        r = crossbench.bench(fn, name=name, dtype="bf16", size=n, out=os.path.join(out, "bench_" + name), **work)
        print("bench: %s" % r)
        print("       %.1f TFLOP/s, %.0f GB/s" % (r.tflops, r.gbps))
        ok = ok and r.passed and r.agree is not False
        summary["bench"].append({"name": r.name, "event_ns": r.event_ns, "cupti_ns": r.cupti_ns,
                                 "cupti_kernel_ns": r.cupti_kernel_ns, "diff_ns": r.diff_ns,
                                 "tolerance_ns": r.tolerance_ns, "agree": r.agree, "noise": r.noise,
                                 "samples": r.samples, "calls_per_sample": r.calls_per_sample,
                                 "tflops": r.tflops, "gbps": r.gbps, "passed": r.passed, "verdict": r.verdict,
                                 "run_dir": os.path.relpath(r.run_dir, out)})

    # 2. Check a torch.profiler profile (after crossbench's runs: CUPTI serves one profiler at a time).
    x, y = (torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):  # warm-up: cuBLAS handles and kernels loaded before profiling
        (x @ y + x).sum()
    torch.cuda.synchronize()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts) as prof:
        for _ in range(5):
            z = x @ y + x
        torch.cuda.synchronize()
    v = crossbench.check_profile(prof, os.path.join(out, "profile"))
    print("check_profile: %s (exit code %d; %s)" % (v.verdict, v.exit_code, v.report_path))
    sys.stdout.write(v.summary)
    summary["profiles"].append({"how": "check_profile", "verdict": v.verdict, "status": v.status,
                                "exit_code": v.exit_code, "counts": v.counts, "causes": v.causes,
                                "report": os.path.relpath(v.report_path, out)})

    # 3. A scheduled profile: every trace ready is checked by the handler.
    h = crossbench.handler(os.path.join(out, "handler"))
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=h) as p:
        for _ in range(8):
            z = x @ y + x
            torch.cuda.synchronize()
            p.step()
    del z
    for res in h.results:
        summary["profiles"].append({"how": "handler", "verdict": res.verdict, "status": res.status,
                                    "exit_code": res.exit_code, "counts": res.counts, "causes": res.causes,
                                    "report": os.path.relpath(res.report_path, out)})
    if not h.results:
        print("check_and_time: the handler saw no trace", file=sys.stderr)
        ok = False

    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print("summary: %s" % os.path.join(out, "summary.json"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
