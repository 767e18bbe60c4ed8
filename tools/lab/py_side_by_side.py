#!/usr/bin/env python3
"""The same PyTorch and Triton callables through crossbench.bench, triton.testing.do_bench and
torch.utils.benchmark.Timer (and a naive cudaEvent pair per call), with CUPTI's kernel time as the
reference column (issue 20). On the H200: bash tools/lab/h200_python.sh.

  python3 tools/lab/py_side_by_side.py --out DIR [--rounds 3]      # needs crossbench importable

Workloads: torch.add bf16 at 64^2, 1024^2, 4096^2; torch.matmul bf16 at 64 and 4096; a small
Triton add kernel (bf16, 1024^2) when triton is installed. Inputs drawn once, random. The tools
are interleaved in one process: each round runs every workload through every tool, the tool order
rotating from round to round; each cell is the median over rounds of the tool's own median:
- CUPTI kernel (reference): crossbench's CUPTI kernel time per call (its run folder's table.json,
  the op's CUDA time avg: every kernel of the call, launch gaps excluded);
- crossbench: bench(fn, warmup=True) in hot mode, the per-call cudaEvent median; beside it CUPTI's
  per-call span of the recorded samples and whether the two agree within max(0.5 us, 1%) by the
  validator's event_vs_cupti rule (each sample's event interval against the CUPTI span of the same
  sample; the issue's "done when", printed per row);
- do_bench: triton.testing.do_bench(fn, return_mode="median") (it clears a 256 MB buffer before
  every call, so it times a call after an L2 flush, launch included);
- Timer: torch.utils.benchmark.Timer("fn()").blocked_autorange(min_run_time=0.5).median: host
  wall time of back-to-back calls per call (launch path included, CUDA synchronized per block);
- naive events: a torch.cuda.Event pair around each single call, median of 200 calls.
Writes DIR/side_by_side.md and DIR/side_by_side.json (every round's figures and run folders under
DIR/runs); prints the table. Exit 0 when crossbench and CUPTI agree on every "done when" row.
"""
import argparse
import json
import os
import statistics
import sys

import torch

import crossbench

try:
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except ImportError:  # the Triton row and the do_bench column are then left out
    triton = None

DONE_WHEN = ("add bf16 64^2", "add bf16 1024^2", "add bf16 4096^2", "matmul bf16 64", "matmul bf16 4096")


def workloads():
    """[(label, fixture name, size, fn, flops, bytes)], inputs random bf16 on the GPU."""
    dev, bf16 = torch.device("cuda"), torch.bfloat16
    out = []
    for n in (64, 1024, 4096):
        a, b = torch.randn(n, n, device=dev, dtype=bf16), torch.randn(n, n, device=dev, dtype=bf16)
        out.append((f"add bf16 {n}^2", "torch_add", n, lambda a=a, b=b: torch.add(a, b), 0.0, 3.0 * a.nbytes))
    for n in (64, 4096):
        a, b = torch.randn(n, n, device=dev, dtype=bf16), torch.randn(n, n, device=dev, dtype=bf16)
        out.append((f"matmul bf16 {n}", "torch_matmul", n, lambda a=a, b=b: torch.matmul(a, b), 2.0 * n ** 3,
                    3.0 * a.nbytes))
    if triton is not None:
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

        a, b = torch.randn(1024, 1024, device=dev, dtype=bf16), torch.randn(1024, 1024, device=dev, dtype=bf16)
        c = torch.empty_like(a)
        grid = (triton.cdiv(a.numel(), 1024),)
        out.append(("triton add bf16 1024^2", "triton_add", 1024,
                    lambda: add_kernel[grid](a, b, c, a.numel(), BLOCK=1024), 0.0, 3.0 * a.nbytes))
    return out


def run_crossbench(label, name, n, fn, flops, nbytes, out_dir):
    r = crossbench.bench(fn, warmup=True, name=name, dtype="bf16", size=n, flops=flops, bytes=nbytes, out=out_dir,
                         max_time_s=2.0)
    return {"event_ns": r.event_ns, "cupti_ns": r.cupti_ns, "cupti_kernel_ns": r.cupti_kernel_ns, "diff_ns": r.diff_ns,
            "tolerance_ns": r.tolerance_ns, "agree": r.agree, "noisy": r.noisy, "noise": r.noise, "samples": r.samples,
            "calls_per_sample": r.calls_per_sample, "passed": r.passed, "verdict": r.verdict, "run_dir": r.run_dir,
            "note": r.note}


def run_do_bench(fn):
    return do_bench(fn, return_mode="median") * 1e6  # ms -> ns


def run_timer(fn):
    from torch.utils.benchmark import Timer
    return Timer("fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.5).median * 1e9


def run_naive_events(fn, calls=200):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6)
    return statistics.median(times)


def us(ns):
    return "-" if ns is None else f"{ns / 1e3:.2f} us"


def ratio(ns, ref):
    return "" if ns is None or not ref else f" ({ns / ref:.1f}x)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for side_by_side.md/.json and the run folders (created)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every workload through every tool (3)")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("py_side_by_side: error: --rounds must be at least 1")
    reason = crossbench.device_error()
    if reason:
        sys.exit(f"py_side_by_side: error: {reason}")
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    wl = workloads()
    for _, _, _, fn, _, _ in wl:  # compile, allocate, load once, outside every tool
        fn()
    torch.cuda.synchronize()
    tools = ["crossbench", "naive_events", "timer"] + (["do_bench"] if triton is not None else [])
    figures = {label: {t: [] for t in tools} for label, *_ in wl}
    for k in range(args.rounds):
        order = tools[k % len(tools):] + tools[:k % len(tools)]
        for label, name, n, fn, flops, nbytes in wl:
            for tool in order:
                if tool == "crossbench":
                    run_dir = os.path.join(args.out, "runs", f"{label.replace(' ', '_').replace('^', '')}-r{k}")
                    v = run_crossbench(label, name, n, fn, flops, nbytes, run_dir)
                elif tool == "do_bench":
                    v = run_do_bench(fn)
                elif tool == "timer":
                    v = run_timer(fn)
                else:
                    v = run_naive_events(fn)
                figures[label][tool].append(v)
            print(f"round {k + 1}/{args.rounds}: {label} done", file=sys.stderr, flush=True)

    rows = []
    for label, *_ in wl:
        f = figures[label]
        xb = f["crossbench"]
        med = lambda key: statistics.median(x[key] for x in xb if x[key] is not None) if any(x[key] is not None for x in xb) else None
        row = {"workload": label, "cupti_kernel_ns": med("cupti_kernel_ns"), "crossbench_event_ns": med("event_ns"),
               "crossbench_cupti_span_ns": med("cupti_ns"), "diff_ns": med("diff_ns"), "tolerance_ns": med("tolerance_ns"),
               "agree_rounds": sum(1 for x in xb if x["agree"]), "rounds": len(xb),
               "validated_rounds": sum(1 for x in xb if x["passed"]), "noisy_rounds": sum(1 for x in xb if x["noisy"]),
               "timer_ns": statistics.median(f["timer"]), "naive_events_ns": statistics.median(f["naive_events"]),
               "do_bench_ns": statistics.median(f["do_bench"]) if "do_bench" in f else None}
        # The "done when" figure, the validator's event_vs_cupti rule: per recorded sample the
        # cudaEvent interval against the CUPTI span of the same sample, per call; the median |diff|
        # of a run against max(500 ns, 1% of the event median); here its median over rounds.
        row["event_vs_cupti_ns"], row["bound_ns"] = row["diff_ns"], row["tolerance_ns"]
        row["agree"] = row["diff_ns"] is not None and row["diff_ns"] <= row["tolerance_ns"]
        rows.append(row)

    lines = ["| workload | CUPTI kernel (reference) | crossbench event | CUPTI span | event vs CUPTI | do_bench (median) | "
             "torch Timer (median) | naive event pair |", "|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        ref = r["cupti_kernel_ns"]
        agree = "-" if r["event_vs_cupti_ns"] is None else (
            f"agree: {r['event_vs_cupti_ns']:.0f} ns <= {r['bound_ns']:.0f} ns" if r["agree"]
            else f"DISAGREE: {r['event_vs_cupti_ns']:.0f} ns > {r['bound_ns']:.0f} ns")
        lines.append(f"| {r['workload']} | {us(ref)} | {us(r['crossbench_event_ns'])}{ratio(r['crossbench_event_ns'], ref)} | "
                     f"{us(r['crossbench_cupti_span_ns'])} | {agree} | {us(r['do_bench_ns'])}{ratio(r['do_bench_ns'], ref)} | "
                     f"{us(r['timer_ns'])}{ratio(r['timer_ns'], ref)} | {us(r['naive_events_ns'])}{ratio(r['naive_events_ns'], ref)} |")
    gpu = torch.cuda.get_device_name()
    head = (f"Side by side on {gpu}, PyTorch {torch.__version__}, Triton {triton.__version__ if triton else 'not installed'}, "
            f"bf16, medians over {args.rounds} interleaved rounds (tools/lab/py_side_by_side.py). Ratios are to the "
            f"CUPTI kernel time. crossbench validated {sum(r['validated_rounds'] for r in rows)} of "
            f"{sum(r['rounds'] for r in rows)} runs.")
    done = [r for r in rows if r["workload"] in DONE_WHEN]
    verdict = [f"- {r['workload']}: crossbench event {us(r['crossbench_event_ns'])} vs CUPTI {us(r['crossbench_cupti_span_ns'])}: "
               f"{'AGREE' if r['agree'] else 'DISAGREE'}, median |event - CUPTI| per call "
               f"{'-' if r['diff_ns'] is None else format(r['diff_ns'], '.0f')} ns within max(0.5 us, 1%) = "
               f"{'-' if r['bound_ns'] is None else format(r['bound_ns'], '.0f')} ns "
               f"(rounds agreeing: {r['agree_rounds']}/{r['rounds']}, noisy: {r['noisy_rounds']})" for r in done]
    text = "\n".join([head, ""] + lines + ["", "Done when (per-call event median vs CUPTI's):"] + verdict) + "\n"
    with open(os.path.join(args.out, "side_by_side.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "side_by_side.json"), "w") as f:
        json.dump({"gpu": gpu, "torch": torch.__version__, "triton": triton.__version__ if triton else None,
                   "rounds": args.rounds, "rows": rows, "figures": figures}, f, indent=1)
    print(text)
    return 0 if done and all(r["agree"] for r in done) else 1


if __name__ == "__main__":
    sys.exit(main())
