#!/usr/bin/env python3
"""Records a generated matrix of PyTorch profiler exports: workload families x profiler options x
table options (the validator's PyTorch corpus; docs/validator.md).

Usage:
  python3 tools/lab/torch_matrix/record.py OUT_DIR [--batch corpus|holdout] [--only FAMILY,...]
                                           [--list] [--budget-s S]

The matrix is generated, not hand-picked: every family is recorded under the profiler option sets
PROFILER_SETS[k] for the k chosen by a rotation seeded by the batch name (`corpus` and `holdout`
choose different combinations and different sizes), and every export gets every table option set of
TABLE_SETS that its profiler options allow (group_by_input_shape needs record_shapes,
group_by_stack_n needs with_stack, memory sort keys need profile_memory). For an export E:
  OUT_DIR/E.json[.gz]   prof.export_chrome_trace() (gzipped when over 2 MB)
  OUT_DIR/E.T.txt       prof.key_averages(...).table(...) for each table set T that applies
  OUT_DIR/E.meta.json   versions, GPU, UTC date, the family's settings, the profiler options and
                        the exact key_averages()/table() call of every table
OUT_DIR/summary.json lists every export and its status; OUT_DIR/notes.txt has the traceback of
every family that failed (one family's failure does not stop the rest). Exit: 0 all recorded,
1 some failed, 2 torch missing or OUT_DIR unusable.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import random
import shutil
import sys
import threading
import time
import traceback

# ---------------------------------------------------------------------------------------------
# Profiler option sets (torch.profiler.profile keyword arguments; "schedule" handled apart)
# ---------------------------------------------------------------------------------------------
PROFILER_SETS = {
    "shapes": dict(record_shapes=True),
    "plain": dict(),
    "mem_stack": dict(record_shapes=True, profile_memory=True, with_stack=True),
    "flops_modules": dict(record_shapes=True, with_flops=True, with_modules=True),
    "sched_repeat2": dict(record_shapes=True, schedule=dict(wait=1, warmup=1, active=2, repeat=2)),
}

# Table option sets: (key_averages kwargs, table kwargs, needs). needs: profiler options that must
# be on for PyTorch to accept the call.
TABLE_SETS = {
    "t_selfcuda": ({}, dict(sort_by="self_cuda_time_total", row_limit=-1), ()),
    "t_cudatotal10": ({}, dict(sort_by="cuda_time_total", row_limit=10), ()),
    "t_cpu_w30_header": ({}, dict(sort_by="cpu_time_total", row_limit=-1, max_name_column_width=30,
                                  header="crossbench torch matrix"), ()),
    "t_count_top": ({}, dict(sort_by="count", row_limit=-1, top_level_events_only=True), ()),
    "t_selfcpu_w80": ({}, dict(sort_by="self_cpu_time_total", row_limit=-1,
                               max_name_column_width=80), ()),
    "t_shapes": (dict(group_by_input_shape=True), dict(sort_by="cuda_time_total", row_limit=-1),
                 ("record_shapes",)),
    "t_shapes_w40": (dict(group_by_input_shape=True),
                     dict(sort_by="self_cpu_time_total", row_limit=25, max_shapes_column_width=40),
                     ("record_shapes",)),
    "t_stack5": (dict(group_by_stack_n=5), dict(sort_by="self_cpu_time_total", row_limit=-1,
                                                 max_src_column_width=60), ("with_stack",)),
    "t_cudamem": ({}, dict(sort_by="self_cuda_memory_usage", row_limit=-1), ("profile_memory",)),
    "t_flops": ({}, dict(sort_by="flops", row_limit=-1), ("with_flops",)),
}


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Workload families. Each takes (torch, dev, v) where v is the batch's variant dict, does its own
# warm-up outside the profile, and returns (step, settings): step() runs one profiled iteration;
# settings describe it for the meta file. Sizes come from v so the holdout batch differs.
# ---------------------------------------------------------------------------------------------

def f_cnn_amp(torch, dev, v):
    nn = torch.nn
    c = v["width"]
    model = nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
        nn.Conv2d(c, 2 * c, 3, padding=1, stride=2), nn.BatchNorm2d(2 * c), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * c, 10)).to(dev)
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(v["batch"], 3, 32, 32, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (v["batch"],), device=dev)
    amp_dtype = torch.float16 if v["seed"] % 2 else torch.bfloat16

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step, dict(model="conv-bn-relu x2, pool, linear; channels_last; SGD momentum",
                      amp=str(amp_dtype), grad_scaler=True, input=[v["batch"], 3, 32, 32])


def f_sdpa(torch, dev, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]
    be = backends[v["seed"] % len(backends)]
    b, h, s, d = 4, 8, v["seq"], 64
    q, k, w = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))

    def step():
        with sdpa_kernel([be]):
            o = torch.nn.functional.scaled_dot_product_attention(q, k, w, is_causal=True)
        o.float().sum().backward()
    return step, dict(op="scaled_dot_product_attention fwd+bwd, causal", backend=str(be),
                      shape=[b, h, s, d], dtype="bf16")


def f_lstm(torch, dev, v):
    lstm = torch.nn.LSTM(128, v["hidden"], num_layers=2, batch_first=True).to(dev)
    x = torch.randn(8, v["seq"] // 4, 128, device=dev)

    def step():
        out, _ = lstm(x)
        out.sum().backward()
    return step, dict(model="nn.LSTM(128, %d, num_layers=2) fwd+bwd (cuDNN)" % v["hidden"],
                      input=[8, v["seq"] // 4, 128])


def f_embedding_index(torch, dev, v):
    n = v["vocab"]
    emb = torch.nn.Embedding(n, 64).to(dev)
    bag = torch.nn.EmbeddingBag(n, 64, mode="sum").to(dev)
    idx = torch.randint(0, n, (256, 16), device=dev)
    offs = torch.arange(0, 256 * 16, 16, device=dev)
    src = torch.randn(4096, 64, device=dev)

    def step():
        e = emb(idx)
        b_ = bag(idx.flatten(), offs)
        g = torch.gather(src, 0, idx[:, :1].expand(256, 64) % 4096)
        acc = torch.zeros(n, 64, device=dev).index_add_(0, idx[:, 0], b_)
        sel = torch.index_select(src, 0, idx[:, 0] % 4096)
        nz = torch.nonzero(acc.sum(1) > 0)  # synchronizes
        (e.sum() + g.sum() + sel.sum() + nz.numel()).backward() if e.requires_grad else None
        return acc
    return step, dict(ops="Embedding, EmbeddingBag(sum), gather, index_add_, index_select, "
                          "nonzero (a device-to-host sync)", vocab=n)


def f_optimizer(torch, dev, v):
    kind = ["foreach", "fused", "for_loop"][v["seed"] % 3]
    params = [torch.nn.Parameter(torch.randn(64 + 8 * i, 64, device=dev)) for i in range(12)]
    opt = torch.optim.Adam(params, lr=1e-3, foreach=(kind == "foreach"),
                           fused=(kind == "fused") or None)
    sgd = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=(kind != "for_loop"))

    def step():
        for p in params:
            p.grad = torch.randn_like(p)
        opt.step()
        sgd.step()
    return step, dict(optimizer="Adam + SGD(momentum) over 12 parameters", implementation=kind)


def _compiled(torch, dev, v, mode):
    def f(x, w):
        return torch.nn.functional.gelu(x @ w) * torch.sigmoid(x[:, : w.shape[1]]) + 1.0
    n = v["mm"]
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    cf = torch.compile(f, mode=mode) if mode else torch.compile(f)
    for _ in range(3):  # compile (and cudagraph-tree warm-up) outside the profile
        cf(x, w)
    torch.cuda.synchronize()

    def step():
        return cf(x, w)
    return step, dict(function="gelu(x @ w) * sigmoid(x) + 1", n=n, dtype="bf16",
                      compile="torch.compile(mode=%r), 3 calls before the profile" % mode)


def f_compile_default(torch, dev, v):
    return _compiled(torch, dev, v, None)


def f_compile_reduce_overhead(torch, dev, v):
    return _compiled(torch, dev, v, "reduce-overhead")


def f_compile_max_autotune(torch, dev, v):
    return _compiled(torch, dev, v, "max-autotune-no-cudagraphs")


def f_cuda_graph(torch, dev, v):
    from torch.profiler import record_function
    n = v["mm"]
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)

    def body():
        return torch.relu(x @ w) + 1.0
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    g.replay()

    def step():
        with record_function("matrix.graph_replay"):
            g.replay()
        torch.add(x, 1.0)
    return step, dict(graph="relu(x @ w) + 1 captured by hand, replayed under record_function",
                      n=n)


def f_multi_stream(torch, dev, v):
    n = v["mm"]
    s = [torch.cuda.Stream() for _ in range(3)]
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    host = torch.randn(n, n, pin_memory=True)
    done = torch.cuda.Event()

    def step():
        with torch.cuda.stream(s[0]):
            c = a @ a
            done.record()
        with torch.cuda.stream(s[1]):
            d = host.to(dev, non_blocking=True)
        with torch.cuda.stream(s[2]):
            s[2].wait_event(done)
            e = c.float() + 1.0
        torch.cuda.current_stream().wait_stream(s[1])
        torch.cuda.current_stream().wait_stream(s[2])
        return d.sum() + e.sum()
    return step, dict(streams=3, ops="matmul on s0, pinned H2D copy on s1, add on s2 after s0's "
                                     "event", n=n)


def f_threads(torch, dev, v):
    n = v["mm"]
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)

    def worker(k):
        st = torch.cuda.Stream()
        with torch.cuda.stream(st):
            for _ in range(2):
                b = a @ a
                b = b * float(k + 1)
        st.synchronize()

    def step():
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return step, dict(threads=2, ops="each thread: 2 x (matmul, mul) on its own stream", n=n)


class _Squares:
    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = self.torch.Generator().manual_seed(i)
        return self.torch.randn(self.n, generator=g), i % 10


def f_dataloader(torch, dev, v):
    dl = torch.utils.data.DataLoader(_Squares(torch, 256), batch_size=16, num_workers=2,
                                     pin_memory=True, persistent_workers=True)
    lin = torch.nn.Linear(256, 10).to(dev)
    it = {"it": iter(dl)}

    def step():
        try:
            x, y = next(it["it"])
        except StopIteration:
            it["it"] = iter(dl)
            x, y = next(it["it"])
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        torch.nn.functional.cross_entropy(lin(x), y).backward()
    step()
    return step, dict(loader="DataLoader(num_workers=2, pin_memory=True, persistent_workers)",
                      model="Linear(256, 10)")


def f_collectives(torch, dev, v):
    import torch.distributed as dist
    backend = "nccl" if v["seed"] % 2 == 0 else "gloo"
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + v["seed"] % 100))
        dist.init_process_group(backend, rank=0, world_size=1)
    t = torch.randn(1 << 16, device=dev if backend == "nccl" else "cpu")

    def step():
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        if backend == "gloo":
            t.to(dev).mul_(0.5)
        else:
            t.mul_(0.5)
    step()
    torch.cuda.synchronize()
    return step, dict(collective="one-rank %s process group: all_reduce, broadcast" % backend)


def f_transformer_train(torch, dev, v):
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             dropout=0.1, batch_first=True).to(dev)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    src = torch.randn(8, v["seq"] // 4, 256, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        layer(src).pow(2).mean().backward()
        opt.step()
    return step, dict(model="TransformerEncoderLayer(256, 4, 1024) + AdamW, fp32",
                      input=[8, v["seq"] // 4, 256])


def f_memset_copy(torch, dev, v):
    n = v["mm"]
    host = torch.randn(n, n)

    def step():
        z = torch.zeros(n, n, device=dev)          # cudaMemsetAsync
        z.fill_(1.5)
        d = host.to(dev)                             # H2D, pageable
        r = (d + z).cpu()                            # D2H, synchronizes
        return float(r[0, 0]) + (d.sum().item())     # .item(): another sync
    return step, dict(ops="zeros (memset), fill_, pageable H2D, D2H, .item()", n=n)


def f_mixed_fp16(torch, dev, v):
    b = torch.randn(16, v["seq"] // 4, 64, device=dev, dtype=torch.float16)
    w = torch.randn(16, 64, 64, device=dev, dtype=torch.float16)
    conv = torch.nn.Conv1d(64, 64, 5, padding=2).to(dev).half()
    ln = torch.nn.LayerNorm(64).to(dev).half()
    tgt = torch.randint(0, 64, (16 * (v["seq"] // 4),), device=dev)

    def step():
        y = torch.baddbmm(b, b, w)
        y = conv(y.transpose(1, 2)).transpose(1, 2)
        y = torch.softmax(ln(y), -1)
        return torch.nn.functional.cross_entropy(y.reshape(-1, 64).float(), tgt)
    return step, dict(ops="baddbmm, conv1d, layer_norm, softmax, cross_entropy; fp16")


def f_nested_ranges(torch, dev, v):
    from torch.profiler import record_function
    a = torch.randn(v["mm"], v["mm"], device=dev, dtype=torch.bfloat16)
    long_name = ("matrix.a_range_name_long_enough_to_be_cut_by_the_table_" + "x" * 30)

    def step():
        with record_function("matrix.outer"):
            with record_function("matrix.outer"):
                a @ a
            with record_function(long_name + "_one"):
                torch.add(a, 1.0)
            with record_function(long_name + "_two"):
                torch.mul(a, 2.0)
    return step, dict(ranges="same-name nesting and two names with one 52-character prefix")


FAMILIES = {
    "cnn_amp": f_cnn_amp, "sdpa": f_sdpa, "lstm": f_lstm, "embedding_index": f_embedding_index,
    "optimizer": f_optimizer, "compile_default": f_compile_default,
    "compile_reduce_overhead": f_compile_reduce_overhead,
    "compile_max_autotune": f_compile_max_autotune, "cuda_graph": f_cuda_graph,
    "multi_stream": f_multi_stream, "threads": f_threads, "dataloader": f_dataloader,
    "collectives": f_collectives, "transformer_train": f_transformer_train,
    "memset_copy": f_memset_copy, "mixed_fp16": f_mixed_fp16, "nested_ranges": f_nested_ranges,
}

# Per batch: the sizes and the seed of the rotation that picks each family's profiler sets.
BATCHES = {
    "corpus": dict(seed=0, width=16, batch=32, seq=256, hidden=128, vocab=5000, mm=512),
    "holdout": dict(seed=1, width=24, batch=16, seq=384, hidden=96, vocab=7000, mm=768),
}
SETS_PER_FAMILY = 3


def env_meta(torch):
    m = {"torch": torch.__version__, "torch_cuda": getattr(torch.version, "cuda", None),
         "torch_git": getattr(torch.version, "git_version", None),
         "python": platform.python_version(), "platform": platform.platform(),
         "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        import triton
        m["triton"] = triton.__version__
    except Exception:
        m["triton"] = None
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        m.update(gpu=p.name, gpu_capability="%d.%d" % (p.major, p.minor),
                 cudnn=torch.backends.cudnn.version())
    return m


def choose_sets(batch_seed, family):
    """The profiler option sets of one family in one batch: a seeded rotation, so the matrix is
    generated (the holdout's seed gives other combinations)."""
    names = sorted(PROFILER_SETS)
    rng = random.Random("%d:%s" % (batch_seed, family))
    rng.shuffle(names)
    return sorted(names[:SETS_PER_FAMILY])


def table_sets_for(popts):
    on = {k for k, val in popts.items() if val is True}
    return [t for t, (_, _, needs) in TABLE_SETS.items() if all(n in on for n in needs)]


def write_export(prof, out, name, meta):
    trace = os.path.join(out, name + ".json")
    prof.export_chrome_trace(trace)
    if os.path.getsize(trace) > 2 * 1024 * 1024:
        with open(trace, "rb") as fi, gzip.open(trace + ".gz", "wb", compresslevel=9) as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(trace)
        trace += ".gz"
    tables = {}
    for t in table_sets_for(meta["profiler"]):
        ka_kw, tb_kw, _ = TABLE_SETS[t]
        text = prof.key_averages(**ka_kw).table(**tb_kw)
        with open(os.path.join(out, "%s.%s.txt" % (name, t)), "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        tables[t] = "prof.key_averages(%s).table(%s)" % (
            ", ".join("%s=%r" % kv for kv in ka_kw.items()),
            ", ".join("%s=%r" % kv for kv in tb_kw.items()))
    meta = dict(meta, trace=os.path.basename(trace), tables=tables)
    with open(os.path.join(out, name + ".meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return len(tables)


def record_family(torch, family, v, out, env):
    from torch.profiler import ProfilerActivity, profile, schedule
    dev = torch.device("cuda")
    torch.manual_seed(v["seed"] * 1000 + len(family))
    step, settings = FAMILIES[family](torch, dev, v)
    for _ in range(2):  # warm-up outside every profile
        step()
    torch.cuda.synchronize()
    done = []
    for pset in choose_sets(v["seed"], family):
        popts = dict(PROFILER_SETS[pset])
        sched = popts.pop("schedule", None)
        meta = dict(env, family=family, profiler_set=pset, settings=settings,
                    profiler=dict(popts, activities=["CPU", "CUDA"]))
        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        if sched:
            meta["profiler"]["schedule"] = sched
            cycles = []

            def ready(p, pset=pset, meta=meta, cycles=cycles):
                name = "%s.%s.c%d" % (family, pset, len(cycles))
                cycles.append(write_export(p, out, name, dict(meta, cycle=len(cycles))))
                done.append(name)
            steps = (sched["wait"] + sched["warmup"] + sched["active"]) * sched["repeat"] + 1
            with profile(activities=acts, schedule=schedule(**sched), on_trace_ready=ready,
                         **popts) as prof:
                for _ in range(steps):
                    step()
                    torch.cuda.synchronize()
                    prof.step()
        else:
            with profile(activities=acts, **popts) as prof:
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
            name = "%s.%s" % (family, pset)
            write_export(prof, out, name, meta)
            done.append(name)
    return done


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--batch", default="corpus", choices=sorted(BATCHES))
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--budget-s", type=float, default=400.0,
                    help="skip the families left once this many seconds have passed")
    a = ap.parse_args(argv)
    v = BATCHES[a.batch]
    fams = [f for f in a.only.split(",") if f] or list(FAMILIES)
    if a.list:
        for f in fams:
            print(f, " ".join(choose_sets(v["seed"], f)))
        return 0
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        print("record.py: unknown family: %s (known: %s)" % (", ".join(bad), ", ".join(FAMILIES)),
              file=sys.stderr)
        return 2
    try:
        import torch
        import torch.profiler  # noqa: F401
    except Exception as e:
        print("record.py: cannot import torch: %s" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("record.py: no CUDA device: the matrix is recorded on a GPU", file=sys.stderr)
        return 2
    os.makedirs(a.out_dir, exist_ok=True)
    env = env_meta(torch)
    env["batch"] = a.batch
    log("record.py: batch %s, torch %s, %s" % (a.batch, env["torch"], env.get("gpu")))
    summary = {"env": env, "families": {}}
    t_start = time.time()
    failed = 0
    for fam in fams:
        if time.time() - t_start > a.budget_s:
            summary["families"][fam] = {"status": "skipped", "why": "time budget"}
            log("%-24s skipped (time budget)" % fam)
            continue
        t0 = time.time()
        try:
            names = record_family(torch, fam, v, a.out_dir, env)
            summary["families"][fam] = {"status": "ok", "exports": names,
                                        "seconds": round(time.time() - t0, 1)}
            log("%-24s ok %5.1f s  %s" % (fam, time.time() - t0, " ".join(names)))
        except Exception as e:  # one family's failure must not stop the rest
            failed += 1
            msg = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300])
            summary["families"][fam] = {"status": "failed", "error": msg}
            log("%-24s FAILED %s" % (fam, msg))
            with open(os.path.join(a.out_dir, "notes.txt"), "a", encoding="utf-8") as f:
                f.write("== %s\n%s\n" % (fam, traceback.format_exc()))
        finally:
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:
                pass
    n_exp = sum(len(s.get("exports", [])) for s in summary["families"].values())
    summary["exports"] = n_exp
    with open(os.path.join(a.out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    log("record.py: %d exports, %d families failed" % (n_exp, failed))
    try:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:
        pass
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
