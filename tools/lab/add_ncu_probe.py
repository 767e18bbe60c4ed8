#!/usr/bin/env python3
"""The process Nsight Compute profiles for issue 19: crossbench's add and PyTorch's, same process,
same inputs, each launched K times back to back between cudaProfilerStart and cudaProfilerStop.

  ncu --replay-mode application --profile-from-start off ... \\
    python3 tools/lab/add_ncu_probe.py --shim build-h200/libxb_add_shim.so --manifest DIR/probe.json \\
      [--sizes 256,16384] [--dtype bf16] [--calls 5] [--configs v1/t128/default,v1/t128/default/lean]

Per n (in --sizes order): inputs a, b drawn as add_vs_torch.py draws them (vs_torch.rand: fp32 in
[-1, 1), rounded; torch.manual_seed(0)), one output per side; each side is launched twice and
every configuration's output checked bit for bit against torch.add's (exit 1 on a difference,
before anything is profiled); then, inside the profiled range, each of our --configs
(tests/perf/add_shim.cpp through ctypes, on the current torch stream) K times and torch.add(a,
b, out=) K times, per n. Nothing else runs in the range, and the sequence is the same in every
run, so application replay (the process run once per metric pass, no memory save and restore
around a kernel: each kernel finds the L2 as the kernel before it left it) can match the kernels
pass to pass (--app-replay-match grid --app-replay-mode strict). The first call of each block
follows another side's kernel; tools/lab/add_ncu_compare.py averages the other K - 1.

Writes --manifest (JSON, whole, before the profiled range; the same in every replay pass): the
blocks in launch order [{label, side, n, dtype, calls}] that add_ncu_compare.py assigns ncu's
kernels to. Exit 0; 1 when an output differs; 2 bad input (one line, nothing written).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_vs_torch as avt  # noqa: E402  Shim, UsageError, BYTES, TORCH, write_whole


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True, help="libxb_add_shim.so (cmake --build BUILD --target xb_add_shim)")
    ap.add_argument("--manifest", required=True, help="JSON file: the profiled blocks in launch order")
    ap.add_argument("--sizes", default="256,16384", help="square sizes n (n x n elements)")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--calls", type=int, default=5, help="back-to-back launches per side and size (K)")
    ap.add_argument("--configs", default="v1/t128/default,v1/t128/default/lean",
                    help="crossbench configurations (`bench tune-add`'s names)")
    a = ap.parse_args(argv)
    a.sizes = avt.parse_sizes(a.sizes)
    if a.dtype not in avt.BYTES:
        raise avt.UsageError(f"--dtype: one of {', '.join(avt.BYTES)} (got {a.dtype})")
    if not 2 <= a.calls <= 50:
        raise avt.UsageError("--calls must be in 2..50")
    a.configs = [c for c in a.configs.split(",") if c]
    if not a.configs or len(set(a.configs)) != len(a.configs) or avt.TORCH in a.configs:
        raise avt.UsageError(f"--configs: one or more names, no repeats, not '{avt.TORCH}' (got {a.configs})")
    folder = os.path.dirname(os.path.abspath(a.manifest))
    if not os.path.isdir(folder):
        raise avt.UsageError(f"--manifest: folder {folder} does not exist")
    if not os.path.isfile(a.shim):
        raise avt.UsageError(f"--shim: {a.shim} not found (cmake --build BUILD --target xb_add_shim builds it)")
    return a


def main(argv=None):
    try:
        args = parse_args(argv)
        import torch
        if not torch.cuda.is_available():
            raise avt.UsageError("no CUDA device (torch.cuda.is_available() is False)")
        import vs_torch  # rand (fp32-drawn inputs, as crossbench's), DTYPES
        try:
            shim = avt.Shim(args.shim)
        except OSError as e:
            raise avt.UsageError(f"--shim: {e}")
        parsed = {c: shim.parse(c) for c in args.configs}
    except avt.UsageError as e:
        print(f"add_ncu_probe.py: {e}", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    code = shim.dtype(args.dtype)
    int_view = torch.int32 if args.dtype == "fp32" else torch.int16
    stream = torch.cuda.current_stream()
    points, blocks, bad = [], [], []
    for n in args.sizes:
        dt = vs_torch.DTYPES[args.dtype]
        a, b = vs_torch.rand((n, n), dt), vs_torch.rand((n, n), dt)
        outs = {label: torch.empty_like(a) for label in args.configs + [avt.TORCH]}
        calls = {}
        for label, tvpk in parsed.items():
            def ours(tvpk=tvpk, label=label, c=outs[label], a=a, b=b, n=n):
                rc = shim.launch(code, a.data_ptr(), b.data_ptr(), c.data_ptr(), n * n, stream.cuda_stream, *tvpk)
                if rc:
                    raise SystemExit(f"xb_add_launch {args.dtype} {n} {label}: {shim.error(rc)}")
            calls[label] = ours
        calls[avt.TORCH] = lambda a=a, b=b, c=outs[avt.TORCH]: torch.add(a, b, out=c)
        for label, call in calls.items():  # twice each: the first loads the kernel (lazy loading)
            call()
            call()
        torch.cuda.synchronize()
        for label in args.configs:
            diff = int((outs[label].view(int_view) != outs[avt.TORCH].view(int_view)).sum().item())
            if diff:
                bad.append(f"{label} {args.dtype} {n}: {diff} elements differ from torch.add's")
        points.append((n, calls))
        blocks += [{"label": label, "side": "torch" if label == avt.TORCH else "ours", "n": n, "dtype": args.dtype,
                    "calls": args.calls} for label in calls]
    if bad:
        print("add_ncu_probe.py: outputs differ: " + "; ".join(bad), file=sys.stderr)
        return 1
    avt.write_whole(args.manifest, json.dumps({"dtype": args.dtype, "calls": args.calls, "sizes": args.sizes,
                                               "configs": args.configs, "torch": torch.__version__,
                                               "gpu": torch.cuda.get_device_name(), "blocks": blocks}, indent=1) + "\n")
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _, calls in points:
        for call in calls.values():
            for _ in range(args.calls):
                call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"add_ncu_probe.py: {sum(b['calls'] for b in blocks)} kernels in the profiled range "
          f"({len(blocks)} blocks of {args.calls})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
