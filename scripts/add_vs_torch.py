#!/usr/bin/env python3
"""crossbench's add kernel against PyTorch's, in interleaved rounds on one GPU (issue 19).

  python3 scripts/add_vs_torch.py --bench build-h200/bench --out DIR [--rounds 3]

Each round times every (dtype, n) twice, crossbench first, then PyTorch, so that a drift of the
GPU's clock during the call reaches both alike:
- crossbench: one `bench --op add --dtype bf16,fp16,fp32 --size ...` run per round (warmed up to
  steady state; hot mode); per fixture, the CUPTI kernel sum per call from its summary.md (the
  median over the recorded steps of each step's kernel time / calls).
- PyTorch: torch.add on the same shapes and dtypes (random data in [-1, 1)), 0.3 s of back-to-back
  calls, then 100 calls under torch.profiler; the per-call kernel time from its kernel records.
The figure per (dtype, n) is the median over the rounds of each side's per-call time; the ratio
is crossbench / PyTorch (target <= 1.00) and GB/s = 3 n^2 bytes(dtype) / crossbench's time.
Writes DIR/add_vs_torch.md and DIR/add_vs_torch.json; prints the markdown.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_torch  # noqa: E402  (torch_call, profile_loop: PyTorch timed as scripts/vs_torch.py does)

BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


def torch_per_call_ns(dtype, n, iters=100, warm_s=0.3):
    call = vs_torch.torch_call("add", dtype, n)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warm_s:
        for _ in range(10):
            call()
        torch.cuda.synchronize()
    recs = vs_torch.profile_loop(call, iters)
    return sum(e["dur"] for e in recs) * 1e3 / iters


def ours_per_call_ns(bench, dtypes, sizes, out):
    cmd = [bench, "--op", "add", "--dtype", ",".join(dtypes), "--size", ",".join(map(str, sizes)), "--warmup",
           "--min-time", "0.2", "--max-time", "1.0", "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench exit {p.returncode}: {p.stderr.strip()[-500:]}")
    ours = {}
    with open(os.path.join(out, "summary.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 11 and cells[0].startswith("add/"):
                _, dtype, n = cells[0].split("/")
                ours[(dtype, int(n))] = float(cells[8]) * 1e3  # CUPTI kernel sum per call, us -> ns
    return ours


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="64,256,1024,4096,16384")
    ap.add_argument("--dtypes", default="bf16,fp16,fp32")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    sizes = [int(x) for x in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    rounds = []
    for r in range(args.rounds):
        ours = ours_per_call_ns(args.bench, dtypes, sizes, os.path.join(args.out, f"round{r}"))
        theirs = {(d, n): torch_per_call_ns(d, n) for d in dtypes for n in sizes}
        rounds.append({"crossbench": ours, "torch": theirs})
        print(f"round {r}: done", file=sys.stderr, flush=True)
    rows = []
    for d in dtypes:
        for n in sizes:
            o = [rd["crossbench"][(d, n)] for rd in rounds]
            t = [rd["torch"][(d, n)] for rd in rounds]
            om, tm = statistics.median(o), statistics.median(t)
            rows.append({"dtype": d, "n": n, "crossbench_ns": om, "torch_ns": tm, "ratio": om / tm,
                         "gbps": 3 * n * n * BYTES[d] / om, "crossbench_rounds_ns": o, "torch_rounds_ns": t})
    md = [f"# crossbench add vs PyTorch {torch.__version__} on {torch.cuda.get_device_name()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
          f"Per-call kernel time, median over {args.rounds} interleaved rounds (scripts/add_vs_torch.py).\n",
          "| dtype | n | crossbench us | PyTorch us | ratio (target <= 1.00) | crossbench GB/s |",
          "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        ok = "met" if row["ratio"] <= 1.0 else "MISSED"
        md.append(f"| {row['dtype']} | {row['n']} | {row['crossbench_ns'] / 1e3:.3f} | {row['torch_ns'] / 1e3:.3f} | "
                  f"{row['ratio']:.3f} {ok} | {row['gbps']:.0f} |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, "add_vs_torch.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "add_vs_torch.json"), "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
