#!/usr/bin/env python3
"""Records a corpus of PyTorch's own profiler exports of ordinary work (issue 16).

Usage:
  python3 tools/lab/record_torch_corpus.py OUT_DIR [--only a,b,...] [--cpu] [--tiny-ops N]
                                         [--list]

For each workload W it writes
  OUT_DIR/W.json       prof.export_chrome_trace()
  OUT_DIR/W.txt        prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=-1)
  OUT_DIR/W.meta.json  torch/CUDA/GPU versions, UTC date, and the exact profiler settings
and prints one summary line per workload. OUT_DIR/notes.txt gets the traceback of every
workload that failed (each runs in its own try/except, so one failure does not stop the rest),
OUT_DIR/summary.json the summary lines. Exit status: 0 when every workload that was tried
succeeded, 1 when one failed, 2 when torch cannot be imported or OUT_DIR is unusable.

Workloads: linear_fwd_bwd, transformer_train_adamw, two_streams, cuda_graph, memory_stack,
compile, tiny_ops_20k, long_names, nested_same_name.

--cpu (or no CUDA device): the same code with activities=[CPU] on the CPU; the CUDA-only
workloads (two_streams, cuda_graph) are skipped and say so. It exists to exercise the script
where there is no GPU; the corpus proper is recorded on the H200 without it.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time
import traceback

WORKLOADS = ["linear_fwd_bwd", "transformer_train_adamw", "two_streams", "cuda_graph",
             "memory_stack", "compile", "tiny_ops_20k", "long_names", "nested_same_name"]
CUDA_ONLY = {"two_streams", "cuda_graph"}
SORT_BY = "self_cuda_time_total"
ROW_LIMIT = -1

# record_function names of 40 to 80 characters around PyTorch's 52-character cut
# (_build_table: names of max_name_column_width - 3 = 52 characters or more end in "..."),
# two of them with the same first 52 characters.
def _long_name(tag, length):
    base = "corpus.long_name.%s_" % tag
    return (base + "x" * length)[:length]


LONG_NAMES = [_long_name("len40", 40), _long_name("len51", 51), _long_name("len52", 52),
              _long_name("len53", 53), _long_name("len56", 56), _long_name("len80", 80),
              # one 52-character prefix, two names
              _long_name("shared_prefix", 52) + "_first", _long_name("shared_prefix", 52) + "_second"]


def log(msg):
    print(msg, flush=True)


class Ctx:
    def __init__(self, torch, cpu_only, tiny_ops):
        self.torch = torch
        self.cuda = (not cpu_only) and torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")
        from torch.profiler import ProfilerActivity
        self.activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        self.activity_names = ["CPU"] + (["CUDA"] if self.cuda else [])
        self.tiny_ops = tiny_ops
        self.half = torch.bfloat16 if self.cuda else torch.float32

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def env_meta(torch, ctx):
    m = {
        "torch": torch.__version__,
        "torch_cuda": getattr(torch.version, "cuda", None),
        "torch_git": getattr(torch.version, "git_version", None),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mode": "cuda" if ctx.cuda else "cpu",
    }
    try:
        import triton  # noqa: F401
        m["triton"] = triton.__version__
    except Exception:
        m["triton"] = None
    if ctx.cuda:
        try:
            p = torch.cuda.get_device_properties(0)
            m["gpu"] = p.name
            m["gpu_capability"] = "%d.%d" % (p.major, p.minor)
            m["gpu_memory_bytes"] = int(p.total_memory)
        except Exception as e:
            m["gpu"] = "unknown (%s)" % e
        try:
            m["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            m["cudnn"] = None
    return m


def export(prof, out_dir, name, settings, ctx, torch, extra=None):
    """Writes W.json, W.txt and W.meta.json; returns (trace events, table rows)."""
    trace = os.path.join(out_dir, name + ".json")
    prof.export_chrome_trace(trace)
    t0 = time.time()
    table = prof.key_averages().table(sort_by=SORT_BY, row_limit=ROW_LIMIT)
    ka_s = time.time() - t0
    with open(os.path.join(out_dir, name + ".txt"), "w", encoding="utf-8") as f:
        f.write(table)
        if not table.endswith("\n"):
            f.write("\n")
    meta = env_meta(torch, ctx)
    meta["workload"] = name
    meta["settings"] = dict(settings)
    meta["settings"].update({
        "activities": ctx.activity_names,
        "export": "prof.export_chrome_trace(%r)" % (name + ".json"),
        "table": "prof.key_averages().table(sort_by=%r, row_limit=%d)" % (SORT_BY, ROW_LIMIT),
    })
    meta["key_averages_seconds"] = round(ka_s, 3)
    if extra:
        meta.update(extra)
    with open(os.path.join(out_dir, name + ".meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    n_events = 0
    try:
        with open(trace, encoding="utf-8") as f:
            n_events = len(json.load(f).get("traceEvents", []))
    except Exception:
        n_events = -1
    seps = [i for i, l in enumerate(table.splitlines())
            if l.strip() and set(l.strip()) <= {"-", " "}]
    n_rows = seps[2] - seps[1] - 1 if len(seps) >= 3 else -1
    return n_events, n_rows


def profile(ctx, **kw):
    from torch.profiler import profile as _profile
    return _profile(activities=ctx.activities, **kw)


def settings_of(kw, **more):
    s = {}
    for k, v in kw.items():
        s[k] = v if isinstance(v, (bool, int, float, str, type(None))) else repr(v)
    s.update(more)
    return s


# ------------------------------------------------------------------------------------------
# Workloads: each records, exports and returns (trace events, table rows, note)
# ------------------------------------------------------------------------------------------

def w_linear_fwd_bwd(ctx, out, torch):
    torch.manual_seed(0)
    lin = torch.nn.Linear(1024, 1024, device=ctx.device, dtype=ctx.half)
    x = torch.randn(256, 1024, device=ctx.device, dtype=ctx.half, requires_grad=True)
    for _ in range(2):  # warm-up (cuBLAS handles, autograd) outside the profile
        lin(x).float().sum().backward()
    ctx.sync()
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(3):
            y = lin(x)
            y.float().sum().backward()
        ctx.sync()
    s = settings_of(kw, model="nn.Linear(1024, 1024)", input=[256, 1024], dtype=str(ctx.half),
                    iterations=3, warmup_iterations=2)
    return export(prof, out, "linear_fwd_bwd", s, ctx, torch) + ("",)


def w_transformer_train_adamw(ctx, out, torch):
    from torch.profiler import schedule
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             dropout=0.1, batch_first=True).to(ctx.device)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    src = torch.randn(16, 64, 256, device=ctx.device)
    sched = dict(wait=1, warmup=1, active=2, repeat=1)
    written = {}

    def on_ready(p):
        written["rows"] = export(p, out, "transformer_train_adamw", s, ctx, torch)

    kw = dict(schedule=schedule(**sched), on_trace_ready=on_ready, record_shapes=True)
    s = settings_of({"record_shapes": True}, schedule=sched,
                    on_trace_ready="export_chrome_trace + key_averages().table() in the handler",
                    model="TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, "
                          "dropout=0.1, batch_first=True), AdamW(lr=1e-4), fp32",
                    input=[16, 64, 256], steps=4)
    with profile(ctx, **kw) as prof:
        for _ in range(4):
            opt.zero_grad(set_to_none=True)
            loss = layer(src).pow(2).mean()
            loss.backward()
            opt.step()
            ctx.sync()
            prof.step()
    if "rows" not in written:
        raise RuntimeError("on_trace_ready was never called")
    return written["rows"] + ("",)


def w_two_streams(ctx, out, torch):
    torch.manual_seed(0)
    a = torch.randn(2048, 2048, device=ctx.device, dtype=ctx.half)
    b = torch.randn(2048, 2048, device=ctx.device, dtype=ctx.half)
    x = torch.randn(4096, 4096, device=ctx.device, dtype=ctx.half)
    y = torch.randn(4096, 4096, device=ctx.device, dtype=ctx.half)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.matmul(a, b)
    ctx.sync()
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(3):
            with torch.cuda.stream(s1):
                c = torch.matmul(a, b)
            with torch.cuda.stream(s2):
                d = torch.add(x, y)
        ctx.sync()
    del c, d
    s = settings_of(kw, ops="torch.matmul(2048^2 bf16) on stream 1, torch.add(4096^2 bf16) "
                    "on stream 2, 3 times", dtype=str(ctx.half))
    return export(prof, out, "two_streams", s, ctx, torch) + ("",)


def w_cuda_graph(ctx, out, torch):
    torch.manual_seed(0)
    x = torch.randn(1024, 1024, device=ctx.device, dtype=ctx.half)
    w = torch.randn(1024, 1024, device=ctx.device, dtype=ctx.half)

    def body():
        return torch.relu(torch.matmul(x, w)) + 1.0

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        yg = body()
    g.replay()
    ctx.sync()
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(5):
            g.replay()
        ctx.sync()
    del yg
    s = settings_of(kw, graph="relu(matmul(x, w)) + 1, 1024^2 bf16, captured once (3 warm-up "
                    "runs on a side stream), replayed 5 times in the profile")
    return export(prof, out, "cuda_graph", s, ctx, torch) + ("",)


def w_memory_stack(ctx, out, torch):
    torch.manual_seed(0)
    kw = dict(profile_memory=True, with_stack=True, record_shapes=True)
    with profile(ctx, **kw) as prof:
        a = torch.randn(1024, 1024, device=ctx.device, dtype=ctx.half)
        b = torch.randn(1024, 1024, device=ctx.device, dtype=ctx.half)
        keep = []
        for i in range(3):
            c = torch.matmul(a, b)
            keep.append(c * 2.0)
            del c
        z = torch.cat(keep)
        del keep
        s_ = z.float().sum()
        ctx.sync()
    del a, b, z, s_
    s = settings_of(kw, ops="randn x2, 3 x (matmul, mul), cat, float, sum; 1024^2",
                    dtype=str(ctx.half))
    return export(prof, out, "memory_stack", s, ctx, torch) + ("",)


def w_compile(ctx, out, torch):
    def f(x, y):
        return torch.sin(x) * torch.cos(y) + torch.tanh(x * y)

    x = torch.randn(4096, 1024, device=ctx.device, dtype=ctx.half)
    y = torch.randn(4096, 1024, device=ctx.device, dtype=ctx.half)
    cf = torch.compile(f)
    t0 = time.time()
    cf(x, y)  # compiles here, outside the profile; an exception is recorded by the caller
    cf(x, y)
    ctx.sync()
    compile_s = time.time() - t0
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(3):
            cf(x, y)
        ctx.sync()
    s = settings_of(kw, function="sin(x) * cos(y) + tanh(x * y), 4096x1024",
                    dtype=str(ctx.half), compile="torch.compile(f) default backend; "
                    "2 calls before the profile", calls=3)
    return export(prof, out, "compile", s, ctx, torch,
                  extra={"compile_seconds": round(compile_s, 2)}) + ("",)


def w_tiny_ops_20k(ctx, out, torch):
    n = ctx.tiny_ops
    x = torch.randn(16, device=ctx.device, dtype=torch.float32)
    for _ in range(10):
        x = x * 1.0001 + 0.0001
    ctx.sync()
    kw = dict()
    with profile(ctx, **kw) as prof:
        for i in range(n // 2):   # two ops per iteration: n ops
            x = x * 1.0001
            x = x + 0.0001
        ctx.sync()
    s = settings_of(kw, ops="%d tiny elementwise ops (alternating mul and add on 16 fp32)" % n)
    return export(prof, out, "tiny_ops_20k", s, ctx, torch) + ("",)


def w_long_names(ctx, out, torch):
    from torch.profiler import record_function
    torch.manual_seed(0)
    a = torch.randn(256, 256, device=ctx.device, dtype=ctx.half)
    b = torch.randn(256, 256, device=ctx.device, dtype=ctx.half)
    torch.matmul(a, b)
    ctx.sync()
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(2):
            for i, n in enumerate(LONG_NAMES):
                with record_function(n):
                    if i % 2:
                        torch.add(a, b)
                    else:
                        torch.matmul(a, b)
        ctx.sync()
    s = settings_of(kw, names=LONG_NAMES, name_lengths=[len(n) for n in LONG_NAMES],
                    ops="each name twice around a matmul or an add of 256^2", dtype=str(ctx.half))
    return export(prof, out, "long_names", s, ctx, torch) + ("",)


def w_nested_same_name(ctx, out, torch):
    # _remove_dup_nodes: a range whose only child has its name counts once.
    from torch.profiler import record_function
    a = torch.randn(512, 512, device=ctx.device, dtype=ctx.half)
    ctx.sync()
    kw = dict(record_shapes=True)
    with profile(ctx, **kw) as prof:
        for _ in range(3):
            with record_function("corpus.same"):
                with record_function("corpus.same"):
                    torch.mul(a, 2.0)
            with record_function("corpus.same_two_children"):
                with record_function("corpus.same_two_children"):
                    torch.mul(a, 3.0)
                torch.add(a, 1.0)
        ctx.sync()
    s = settings_of(kw, ops="record_function('corpus.same') inside itself around a mul; "
                    "'corpus.same_two_children' inside itself plus a sibling add; 3 times")
    return export(prof, out, "nested_same_name", s, ctx, torch) + ("",)


FUNCS = {
    "linear_fwd_bwd": w_linear_fwd_bwd,
    "transformer_train_adamw": w_transformer_train_adamw,
    "two_streams": w_two_streams,
    "cuda_graph": w_cuda_graph,
    "memory_stack": w_memory_stack,
    "compile": w_compile,
    "tiny_ops_20k": w_tiny_ops_20k,
    "long_names": w_long_names,
    "nested_same_name": w_nested_same_name,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--cpu", action="store_true", help="activities=[CPU] on the CPU")
    ap.add_argument("--tiny-ops", type=int, default=20000, help="ops of tiny_ops_20k")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(WORKLOADS))
        return 0
    names = [n for n in a.only.split(",") if n] or list(WORKLOADS)
    unknown = [n for n in names if n not in FUNCS]
    if unknown:
        print("record_torch_corpus: unknown workload(s): %s (known: %s)" %
              (", ".join(unknown), ", ".join(WORKLOADS)), file=sys.stderr)
        return 2
    try:
        import torch
        import torch.profiler  # noqa: F401
    except Exception as e:
        print("record_torch_corpus: cannot import torch: %s" % e, file=sys.stderr)
        return 2
    try:
        os.makedirs(a.out_dir, exist_ok=True)
    except OSError as e:
        print("record_torch_corpus: %s: %s" % (a.out_dir, e), file=sys.stderr)
        return 2
    ctx = Ctx(torch, a.cpu, a.tiny_ops)
    head = env_meta(torch, ctx)
    log("record_torch_corpus: torch %s, %s, mode %s, out %s" %
        (head["torch"], head.get("gpu", "no GPU"), head["mode"], a.out_dir))
    notes_path = os.path.join(a.out_dir, "notes.txt")
    summary = {"env": head, "workloads": {}}
    failed = 0
    for n in names:
        t0 = time.time()
        if n in CUDA_ONLY and not ctx.cuda:
            line = "%-24s skipped (needs CUDA)" % n
            summary["workloads"][n] = {"status": "skipped", "why": "needs CUDA"}
            log(line)
            continue
        try:
            n_events, n_rows, note = FUNCS[n](ctx, a.out_dir, torch)
            dt = time.time() - t0
            log("%-24s ok      %8d trace events %5d table rows %7.1f s%s" %
                (n, n_events, n_rows, dt, ("  " + note) if note else ""))
            summary["workloads"][n] = {"status": "ok", "trace_events": n_events,
                                       "table_rows": n_rows, "seconds": round(dt, 2)}
        except Exception as e:  # one workload's failure must not stop the rest
            failed += 1
            dt = time.time() - t0
            msg = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            log("%-24s FAILED  %s (%.1f s; traceback in notes.txt)" % (n, msg[:200], dt))
            summary["workloads"][n] = {"status": "failed", "error": msg[:2000],
                                       "seconds": round(dt, 2)}
            with open(notes_path, "a", encoding="utf-8") as f:
                f.write("== %s failed (%s, torch %s, mode %s)\n" %
                        (n, head["date_utc"], head["torch"], head["mode"]))
                f.write(traceback.format_exc())
                f.write("\n")
        finally:
            try:
                ctx.sync()
                if ctx.cuda:
                    torch.cuda.empty_cache()
            except Exception:
                pass
    with open(os.path.join(a.out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    log("record_torch_corpus: %d ok, %d failed, %d skipped" % (
        sum(1 for v in summary["workloads"].values() if v["status"] == "ok"), failed,
        sum(1 for v in summary["workloads"].values() if v["status"] == "skipped")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
