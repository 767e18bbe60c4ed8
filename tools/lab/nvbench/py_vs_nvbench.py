#!/usr/bin/env python3
"""The same PyTorch bf16 callables timed by nvbench's Python API (cuda.bench, PyPI cuda-bench) and
by crossbench.bench: issue 40 item 2, run by tools/lab/h200_vs_nvbench.sh, tabled by
tools/lab/nvbench/side_by_side.py (docs/vs-nvbench.md).

The callables are crossbench's built-in ops written in PyTorch, each on preallocated tensors
(out=, so no allocation inside a call): add (torch.add), matmul (torch.matmul), addmm (torch.addmm
with a 2D bias) and addmm_bias1d (torch.addmm with a 1D bias, broadcast along rows), bf16, at each
size of --sizes; inputs uniform in [-1, 1) from a fixed seed. Each callable's result is checked once
against float64 arithmetic of the same inputs before it is timed (relative Frobenius error at most
1e-2, bf16's range: the check fails the run, exit 1, naming the op).

    py_vs_nvbench.py nvbench --json FILE [--sizes 64,4096] [NVBENCH_ARGS...]
        registers the benchmark `torch_ops` (axes Op, DType, N, as tools/lab/nvbench's C++
        xb_ops) and runs nvbench's cold and batch measurements on it with nvbench's own defaults,
        its JSON into FILE. The launcher runs the callable under torch.cuda.stream() of the
        state's stream (wrapped once per state, torch.cuda.ExternalStream), as nvbench's PyTorch
        example does.
    py_vs_nvbench.py crossbench --mode hot|cold --out DIR [--sizes 64,4096]
        crossbench.bench on each callable (warmup=True; cold: a list of 8 callables on 8 copies of
        the inputs, bench's minimum number of cold instances), one run folder per op and size,
        DIR/<op>-<n>; bytes = the inputs' and the output's sizes (each read or written once).

Exit 0 when everything ran, 1 when a check or a harness failed (said on stderr), 2 on bad usage.
torch (and cuda.bench or crossbench) are imported only after the arguments are read.
"""
import argparse
import os
import sys

OPS = ("add", "matmul", "addmm", "addmm_bias1d")
COLD_COPIES = 8  # bench's minimum of cold instances (docs/metrics.md, "Cold mode")
SEED = 40


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="harness", required=True)
    nv = sub.add_parser("nvbench", help="nvbench's Python API")
    nv.add_argument("--json", required=True, help="nvbench's JSON output file")
    nv.add_argument("--sizes", default="64,4096")
    xb = sub.add_parser("crossbench", help="crossbench.bench")
    xb.add_argument("--mode", choices=("hot", "cold"), required=True)
    xb.add_argument("--out", required=True, help="folder of the run folders (must not exist)")
    xb.add_argument("--sizes", default="64,4096")
    args, rest = p.parse_known_args(argv)
    if args.harness == "crossbench" and rest:
        p.error("unknown arguments: " + " ".join(rest))
    try:
        args.sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        p.error("--sizes: a comma-separated list of integers, not %r" % args.sizes)
    if not args.sizes or min(args.sizes) < 1:
        p.error("--sizes: sizes must be >= 1")
    if args.harness == "crossbench" and os.path.exists(args.out):
        p.error("--out %s exists" % args.out)
    return args, rest


class Case:
    """One op at size n on its own bf16 tensors: `call()` enqueues one call on torch's current
    stream; `nbytes` is what one call reads and writes (each tensor once)."""

    def __init__(self, torch, op, n, seed):
        gen = torch.Generator(device="cuda").manual_seed(seed)

        def uniform(*shape):
            return (torch.rand(*shape, generator=gen, device="cuda", dtype=torch.float32) * 2 - 1).to(torch.bfloat16)

        self.torch, self.op, self.n = torch, op, n
        self.a, self.b = uniform(n, n), uniform(n, n)
        self.bias = uniform(n, n) if op == "addmm" else uniform(n) if op == "addmm_bias1d" else None
        self.c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        self.nbytes = sum(t.nbytes for t in (self.a, self.b, self.bias, self.c) if t is not None)

    def call(self):
        t = self.torch
        if self.op == "add":
            t.add(self.a, self.b, out=self.c)
        elif self.op == "matmul":
            t.matmul(self.a, self.b, out=self.c)
        else:
            t.addmm(self.bias, self.a, self.b, out=self.c)

    def check(self):
        """Raises RuntimeError when one call's output is off float64 arithmetic by > 1e-2."""
        t = self.torch
        self.c.fill_(float("nan"))
        self.call()
        t.cuda.synchronize()
        a, b = self.a.double(), self.b.double()
        ref = a + b if self.op == "add" else a @ b if self.op == "matmul" else self.bias.double() + a @ b
        err = float(t.linalg.norm(self.c.double() - ref) / t.linalg.norm(ref))
        if not err <= 1e-2:  # NaN fails too
            raise RuntimeError("%s/bf16/%d: relative error %.3g > 1e-2 against float64" % (self.op, self.n, err))


def run_nvbench(args, rest):
    import torch
    import cuda.bench as nvb

    # cuda.bench picks its extension (cu12 or cu13) from cuda-bindings' version when it first
    # loads it; without cuda-bindings it cannot load at all. XB_NVBENCH_CUDA_MAJOR=13 names the
    # extension instead (read by cuda.bench's loader through this module attribute).
    major = os.environ.get("XB_NVBENCH_CUDA_MAJOR")
    if major:
        nvb._get_cuda_major_version = lambda: int(major)

    @nvb.register()
    @nvb.axis.string("Op", list(OPS))
    @nvb.axis.string("DType", ["bf16"])
    @nvb.axis.int64("N", args.sizes)
    def torch_ops(state):
        case = Case(torch, state.get_string("Op"), state.get_int64("N"), SEED)
        try:
            case.check()
        except RuntimeError as e:
            state.skip(str(e))  # nvbench's JSON says why: is_skipped, skip_reason
            return
        state.add_element_count(case.n * case.n, "Elements")
        stream = torch.cuda.ExternalStream(state.get_stream().addressof())

        def launcher(launch):
            with torch.cuda.stream(stream):
                case.call()

        state.exec(launcher)

    nvb.run_all_benchmarks([sys.argv[0], "--json", args.json] + rest)
    return 0


def run_crossbench(args):
    import torch
    import crossbench

    failed = 0
    os.makedirs(args.out)
    for n in args.sizes:
        for op in OPS:
            copies = [Case(torch, op, n, SEED + i) for i in range(COLD_COPIES if args.mode == "cold" else 1)]
            for c in copies:
                c.check()
            fns = [c.call for c in copies] if args.mode == "cold" else copies[0].call
            try:
                r = crossbench.bench(fns, warmup=True, mode=args.mode, name=op, dtype="bf16", size=n,
                                     bytes=float(copies[0].nbytes), out=os.path.join(args.out, "%s-%d" % (op, n)))
                print("%s/bf16/%d %s: event %.3f us, passed %s" % (op, n, args.mode, r.event_us, r.passed))
            except RuntimeError as e:
                failed += 1
                print("%s/bf16/%d %s: FAILED: %s" % (op, n, args.mode, e), file=sys.stderr)
            del copies
            torch.cuda.empty_cache()
    return 1 if failed else 0


def main(argv):
    args, rest = parse_args(argv)
    try:
        return run_nvbench(args, rest) if args.harness == "nvbench" else run_crossbench(args)
    except RuntimeError as e:
        print("py_vs_nvbench: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
