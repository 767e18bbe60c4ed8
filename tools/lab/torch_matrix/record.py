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
    # Activity sets (issue 37): the CPU alone (runtime calls, no device records), CUDA alone.
    "cpu_only": dict(record_shapes=True, activities=["CPU"]),
    "cuda_only": dict(activities=["CUDA"]),
    # The legacy autograd profiler (torch.autograd.profiler.profile, use_kineto=False): its table's
    # CUDA columns come from per-op cudaEvents, its export is EventList.export_chrome_trace's own.
    "legacy_cuda": dict(record_shapes=True, api="autograd_legacy"),
    # A schedule whose on_trace_ready is torch.profiler.tensorboard_trace_handler (the trace is the
    # handler's file, the tables come from the same profiler object).
    "sched_handler": dict(record_shapes=True, schedule=dict(wait=1, warmup=1, active=2, repeat=1),
                          handler="tensorboard"),
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


# Every key_averages()/table() option that changes rows or cells, combined: a seeded sample of the
# grid per export (GRID_TABLES_PER_EXPORT of them, named t_g<k>), on top of the fixed sets above,
# so each batch covers other combinations (generated, not hand-picked).
TABLE_GRID = dict(
    group=[{}, dict(group_by_input_shape=True), dict(group_by_stack_n=5),
           dict(group_by_overload_name=True), dict(group_by_input_shape=True, group_by_overload_name=True)],
    sort_by=[None, "cpu_time_total", "self_cpu_time_total", "cuda_time_total", "self_cuda_time_total",
             "cpu_time", "cuda_time", "count", "cpu_memory_usage", "self_cpu_memory_usage",
             "cuda_memory_usage", "self_cuda_memory_usage", "flops"],
    row_limit=[-1, 5, 12, 100],
    max_name_column_width=[None, 10, 30, 80],
    top_level_events_only=[False, True],
    header=[None, "crossbench torch matrix (grid)"],
    max_shapes_column_width=[None, 40],
)
GRID_TABLES_PER_EXPORT = 6
_SORT_NEEDS = {"cpu_memory_usage": "profile_memory", "self_cpu_memory_usage": "profile_memory",
               "cuda_memory_usage": "profile_memory", "self_cuda_memory_usage": "profile_memory",
               "flops": "with_flops"}
_GROUP_NEEDS = {"group_by_input_shape": "record_shapes", "group_by_stack_n": "with_stack"}


def grid_tables(seed, name, popts):
    """GRID_TABLES_PER_EXPORT table option sets drawn from TABLE_GRID with a seeded generator (the
    export's name and the batch's seed), each one PyTorch accepts for these profiler options:
    {set name: (key_averages kwargs, table kwargs)}."""
    on = {k for k, val in popts.items() if val is True}
    rng = random.Random("grid:%d:%s" % (seed, name))
    out = {}
    for k in range(GRID_TABLES_PER_EXPORT):
        for _ in range(100):
            group = rng.choice(TABLE_GRID["group"])
            sort_by = rng.choice(TABLE_GRID["sort_by"])
            if any(g in group and need not in on for g, need in _GROUP_NEEDS.items()):
                continue
            if sort_by in _SORT_NEEDS and _SORT_NEEDS[sort_by] not in on:
                continue
            tb = dict(sort_by=sort_by, row_limit=rng.choice(TABLE_GRID["row_limit"]))
            for opt in ("max_name_column_width", "top_level_events_only", "header",
                        "max_shapes_column_width"):
                val = rng.choice(TABLE_GRID[opt])
                if val is not None and val is not False:
                    tb[opt] = val
            if tb["sort_by"] is None:
                del tb["sort_by"]
            out["t_g%d" % k] = (dict(group), tb)
            break
    return out


def log(msg):
    print(msg, flush=True)


from families import FAMILIES  # noqa: E402  (this folder is on sys.path when run as a script)

# Per batch: the sizes and the seed of the rotation that picks each family's profiler sets.
BATCHES = {
    "corpus": dict(seed=0, width=16, batch=32, seq=256, hidden=128, vocab=5000, mm=512),
    "holdout": dict(seed=1, width=24, batch=16, seq=384, hidden=96, vocab=7000, mm=768),
    # Issue 37's fresh batch: recorded after the validator's code for the new classes was written.
    "fresh37": dict(seed=2, width=20, batch=24, seq=320, hidden=112, vocab=6000, mm=640),
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


def write_export(prof, out, name, meta, seed, trace_file=None):
    """Writes one export: the trace (prof.export_chrome_trace, or trace_file when a handler wrote
    it), every fixed table set its profiler options allow and its grid tables, and the meta file.
    Returns the number of tables."""
    trace = os.path.join(out, name + ".json")
    if trace_file:
        shutil.move(trace_file, trace)
    else:
        prof.export_chrome_trace(trace)
    if os.path.getsize(trace) > 2 * 1024 * 1024:
        with open(trace, "rb") as fi, gzip.open(trace + ".gz", "wb", compresslevel=9) as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(trace)
        trace += ".gz"
    sets = {t: TABLE_SETS[t][:2] for t in table_sets_for(meta["profiler"])}
    sets.update(grid_tables(seed, name, meta["profiler"]))
    tables, refused = {}, {}
    for t, (ka_kw, tb_kw) in sets.items():
        call = "prof.key_averages(%s).table(%s)" % (
            ", ".join("%s=%r" % kv for kv in ka_kw.items()),
            ", ".join("%s=%r" % kv for kv in tb_kw.items()))
        try:
            text = prof.key_averages(**ka_kw).table(**tb_kw)
        except Exception as e:  # an option PyTorch refuses for this profile: recorded, not fatal
            refused[t] = dict(call=call, error="%s: %s" % (type(e).__name__, str(e)[:200]))
            continue
        with open(os.path.join(out, "%s.%s.txt" % (name, t)), "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        tables[t] = call
    meta = dict(meta, trace=os.path.basename(trace), tables=tables)
    if refused:
        meta["tables_refused_by_pytorch"] = refused
    with open(os.path.join(out, name + ".meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return len(tables)


def _activities(names):
    from torch.profiler import ProfilerActivity
    return [getattr(ProfilerActivity, a) for a in names]


def record_family(torch, family, v, out, env):
    from torch.profiler import profile, schedule, tensorboard_trace_handler
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
        handler = popts.pop("handler", None)
        api = popts.pop("api", "torch.profiler")
        acts = popts.pop("activities", ["CPU", "CUDA"])
        meta = dict(env, family=family, profiler_set=pset, settings=settings,
                    profiler=dict(popts, activities=acts, api=api))
        if api == "autograd_legacy":
            # torch.autograd.profiler.profile with use_kineto left at its default (False): the
            # legacy profiler, CUDA times from cudaEvents around each op.
            meta["profiler"].update(activities=None, use_device="cuda", use_kineto=False)
            prof_cm = torch.autograd.profiler.profile(use_device="cuda", **popts)
        elif sched:
            meta["profiler"]["schedule"] = sched
            cycles = []
            tb_dir = os.path.join(out, ".handler-%s-%s" % (family, pset))

            def ready(p, pset=pset, meta=meta, cycles=cycles, tb_dir=tb_dir):
                name = "%s.%s.c%d" % (family, pset, len(cycles))
                trace_file = None
                if handler == "tensorboard":
                    os.makedirs(tb_dir, exist_ok=True)
                    tensorboard_trace_handler(tb_dir, worker_name=name)(p)
                    written = sorted(os.listdir(tb_dir))
                    trace_file = os.path.join(tb_dir, written[-1])
                    meta = dict(meta, handler="tensorboard_trace_handler", handler_file=written[-1])
                cycles.append(write_export(p, out, name, dict(meta, cycle=len(cycles)), v["seed"],
                                           trace_file))
                done.append(name)
            steps = (sched["wait"] + sched["warmup"] + sched["active"]) * sched["repeat"] + 1
            with profile(activities=_activities(acts), schedule=schedule(**sched), on_trace_ready=ready,
                         **popts) as prof:
                for _ in range(steps):
                    step()
                    torch.cuda.synchronize()
                    prof.step()
            shutil.rmtree(tb_dir, ignore_errors=True)
            continue
        else:
            prof_cm = profile(activities=_activities(acts), **popts)
        with prof_cm as prof:  # three steps, one export
            for _ in range(3):
                step()
            torch.cuda.synchronize()
        name = "%s.%s" % (family, pset)
        write_export(prof, out, name, meta, v["seed"])
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
