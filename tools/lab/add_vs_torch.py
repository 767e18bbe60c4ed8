#!/usr/bin/env python3
"""crossbench's add kernel against PyTorch's, launched the same way from one Python loop (issue 19).

  python3 tools/lab/add_vs_torch.py --shim build-h200/libxb_add_shim.so --out DIR
      [--rounds 3] [--candidates v1/t128/default,v2/t256/default,...] [--sizes 64,...] [--dtypes bf16,...]
      [--patterns eager,graph[,isolated]] [--calls 100] [--warmup-calls 10] [--swap-outputs]

A kernel of about 1 us runs faster on an idle GPU than queued behind another kernel (PyTorch's add
at 64^2: 0.869 us launched one at a time, 0.981 us from a CUDA graph), so both sides are launched
the same way: crossbench's kernel through ctypes (tests/perf/add_shim.cpp, target xb_add_shim:
xb::launch_add, the kernel bench times) and torch.add(a, b, out=c), from the same Python loop, on
the same torch stream, on the same random inputs (drawn in fp32 in [-1, 1) and rounded, as
crossbench's fill), each into its own output tensor (two per point: buffer A, allocated first,
PyTorch's, and buffer B, every crossbench configuration's). Launch patterns:
- eager: one launch per Python iteration, as PyTorch's eager loop (the GPU idles between
  kernels where the host is slower than the kernel: the gap columns show it for each side);
- graph: --calls launches captured into a torch.cuda.CUDAGraph on that stream (the ctypes launch
  is captured too) and replayed, the kernels back to back;
- isolated (only with --patterns ...,isolated): a synchronize after every launch, so that every
  kernel of both sides starts on an idle GPU whatever the host's launch time.
Per (pattern, dtype, n) the sides are crossbench's shipped configuration (bench's
add_launch_config), each --candidates configuration (`bench tune-add`'s names, the lean kernel's
"v1/t128/default/lean" among them; "NAME@gBLOCKS" caps the grid at BLOCKS, so that the kernel
loops over its chunks: a persistent launch) and PyTorch's.
--swap-outputs (rounds a multiple of 4): in rounds 2, 3 (mod 4) every side writes the other's
buffer (crossbench A, PyTorch B; the inputs stay shared), so that a time that follows the output
buffer's placement in memory rather than the kernel cancels in the median over all rounds, which
the main table reports; a second table gives each placement's ratio to PyTorch's, r_B (crossbench
writes B) and r_A, and splits them, with t(side, buffer) = k_side * beta_buffer, into the kernel's
factor sqrt(r_B r_A) = k_ours / k_torch and the buffer's sqrt(r_B / r_A) = beta_B / beta_A.
Placements change every two rounds and the sides' order every round, so each placement sees both
orders.
One torch.profiler session (CUPTI) per round times everything; rounds interleave the sides, in
reverse order every other round. Before each timed block the side is warmed up (eager, isolated:
--warmup-calls launches; graph: one replay), every block ends with a synchronize, and every
kernel record is assigned to its block in stream order, checked by count and by name (ours: the
xb:: add kernels, PyTorch's: at::native): a launch that was not captured, or a stray kernel,
stops the run. Per block: the kernel time per call (sum of kernel durations / calls) and the
idle gap between consecutive kernels; reported is the median over rounds. Ratio = ours /
PyTorch's (target <= 1.00); GB/s = 3 n^2 bytes(dtype) / time. Every configuration's output is
compared bit for bit with torch.add's, after an eager call and after its graph's first replay
(both add in fp32 and round once: kernels/add.h). The GPU's clocks are recorded at the start,
after each round and at the end.

Cost with the defaults (2 patterns x 3 dtypes x 5 sizes x 8 sides x 3 rounds, --calls 100): a
block of 100 calls is 73 ms at 16384^2 fp32 (730 us a call) and well under 1 ms at 64^2..1024^2,
so a round, warm-ups included, is about 4 s of GPU time (nearly all of it 16384^2); with the
set-up (120 graphs captured, each output checked) and torch.profiler's own processing of about
40,000 kernel records per round the run should take 1 to 2 minutes on an H200 (the target: under
4); the progress lines on stderr give each round's seconds.

Writes DIR/add_vs_torch.md and DIR/add_vs_torch.json (each written whole, at the end) and prints
the markdown. Exit 0; 1 when an output differs from torch.add's (the files say where); 2 bad
input (one line, nothing written).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

PATTERNS = ("eager", "graph", "isolated")
BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
SHIPPED = "crossbench"  # the side label of bench's own configuration
BENCH_OWN = (0, 0, 0, 0, -1, 0)  # Shim.parse's fields: add_launch_config's choice for each (tests/perf/add_shim.cpp)
TORCH = "torch"
DEFAULT_CANDIDATES = "v1/t64/default,v1/t128/default,v1/t128/plain,v1/t512/default,v2/t256/default,v4/t256/streaming"
OUR_KERNELS = ("add_flat_kernel", "add_lean_kernel", "add_vectorized_kernel", "add_scalar_kernel")


class UsageError(Exception):
    """Bad input: main() prints it in one line and exits 2."""


def parse_sizes(text):
    """--sizes: comma-separated square sizes n, each in 1..65536, no repeats; UsageError otherwise."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--sizes: '{text}' is not a comma-separated list of integers")
    if any(n < 1 or n > 65536 for n in sizes) or len(set(sizes)) != len(sizes):
        raise UsageError(f"--sizes: each n in 1..65536, no repeats (got {sizes})")
    return sizes


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True, help="libxb_add_shim.so (cmake --build BUILD --target xb_add_shim)")
    ap.add_argument("--out", required=True, help="folder for add_vs_torch.md and add_vs_torch.json")
    ap.add_argument("--sizes", default="64,256,1024,4096,16384", help="square sizes n (n x n elements)")
    ap.add_argument("--dtypes", default="bf16,fp16,fp32")
    ap.add_argument("--patterns", default="eager,graph", help="launch patterns: eager, graph, isolated")
    ap.add_argument("--candidates", default=DEFAULT_CANDIDATES,
                    help="comma-separated configurations of `bench tune-add` (vV/tT/policy[/lean[/rN]]), each with an "
                         "optional @gBLOCKS: the grid capped at BLOCKS (persistent, grid-stride); '' for none")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=100, help="timed launches per block (and per graph)")
    ap.add_argument("--warmup-calls", type=int, default=10, help="launches before each eager or isolated block")
    ap.add_argument("--swap-outputs", action="store_true",
                    help="in rounds 2, 3 (mod 4) the sides write each other's output buffer (rounds: a multiple of 4)")
    a = ap.parse_args(argv)
    a.sizes = parse_sizes(a.sizes)
    a.dtypes = a.dtypes.split(",")
    bad = [d for d in a.dtypes if d not in BYTES]
    if bad or len(set(a.dtypes)) != len(a.dtypes):
        raise UsageError(f"--dtypes: each of bf16, fp16, fp32, no repeats (got {','.join(a.dtypes)})")
    a.patterns = a.patterns.split(",")
    if any(p not in PATTERNS for p in a.patterns) or len(set(a.patterns)) != len(a.patterns):
        raise UsageError(f"--patterns: each of {', '.join(PATTERNS)}, no repeats (got {','.join(a.patterns)})")
    a.candidates = [c for c in a.candidates.split(",") if c]
    if len(set(a.candidates)) != len(a.candidates) or any(c in (SHIPPED, TORCH) for c in a.candidates):
        raise UsageError(f"--candidates: repeated or reserved names in {a.candidates}")
    for c in a.candidates:
        split_grid_cap(c)  # a bad "@g" suffix is refused here, before torch is imported
    if not 1 <= a.rounds <= 100:
        raise UsageError("--rounds must be in 1..100")
    if a.swap_outputs and a.rounds % 4:
        raise UsageError(f"--swap-outputs needs --rounds a multiple of 4 (each placement in both side orders), got {a.rounds}")
    if not 2 <= a.calls <= 1000:
        raise UsageError("--calls must be in 2..1000")
    if not 0 <= a.warmup_calls <= 1000:
        raise UsageError("--warmup-calls must be in 0..1000")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise UsageError(f"--out: {a.out} exists and is not a folder")
    if not os.path.isfile(a.shim):
        raise UsageError(f"--shim: {a.shim} not found (cmake --build BUILD --target xb_add_shim builds it)")
    return a


# ---- Kernel records -> blocks (no torch needed: tests/cpu/test_add_vs_torch.py) -------------------

def kernel_side(name):
    """'ours' for crossbench's add kernels, 'torch' for PyTorch's (at::native), else None."""
    if "xb::" in name and any(k in name for k in OUR_KERNELS):
        return "ours"
    if "at::native" in name:
        return "torch"
    return None


def short_kernel_name(name):
    for k in OUR_KERNELS:
        if k in name:
            return k
    return name.split("<")[0].replace("void ", "").strip()


def block_stats(kernels):
    """kernels: [(start_us, dur_us, name)] of one block, in stream order. Per call: kernel time
    (sum of durations / kernels) and the mean idle gap between consecutive kernels, in ns."""
    total = sum(d for _, d, _ in kernels)
    span = kernels[-1][0] + kernels[-1][1] - kernels[0][0]
    gap = (span - total) / (len(kernels) - 1) if len(kernels) > 1 else 0.0
    return {"per_call_ns": total * 1e3 / len(kernels), "gap_ns": gap * 1e3,
            "kernel_median_ns": statistics.median(d for _, d, _ in kernels) * 1e3,
            "kernel": short_kernel_name(kernels[0][2])}


def assign_blocks(kernels, blocks):
    """Splits the session's kernel records into its blocks, in stream order.

    kernels: [(start_us, dur_us, name)] (any order; sorted here by start). blocks: [(key, side,
    count)] in the order they were launched, key None for a warm-up block. Every kernel of a block
    must be of its side (kernel_side), and the counts must add up to the records exactly. Returns
    {key: block_stats}; raises ValueError saying which block and what was found."""
    ks = sorted(kernels, key=lambda k: k[0])
    expected = sum(c for _, _, c in blocks)
    if len(ks) != expected:
        raise ValueError(f"{len(ks)} kernel records for {expected} launches in {len(blocks)} blocks "
                         "(a launch not captured into its graph, or a kernel of something else)")
    out, i = {}, 0
    for key, side, count in blocks:
        part = ks[i:i + count]
        wrong = [k[2] for k in part if kernel_side(k[2]) != side]
        if wrong:
            raise ValueError(f"block {key or 'warm-up'} ({side}, {count} kernels from record {i}): "
                             f"{len(wrong)} kernels of another side, e.g. {wrong[0][:120]}")
        if key is not None:
            out[key] = block_stats(part)
        i += count
    return out


# ---- Summary and markdown (no torch needed) -----------------------------------------------------

def median_or_none(xs):
    return statistics.median(xs) if xs else None


def summarize(per_round, patterns, dtypes, sizes, labels):
    """per_round: [{(pattern, dtype, n, label): block_stats}] per round. One row per (pattern,
    dtype, n): medians over rounds of every side, ratios to PyTorch's and GB/s."""
    rows = []
    for pat in patterns:
        for d in dtypes:
            for n in sizes:
                moved = 3 * n * n * BYTES[d]
                side = {}
                for label in labels + [TORCH]:
                    got = [r[(pat, d, n, label)] for r in per_round if (pat, d, n, label) in r]
                    ns = [g["per_call_ns"] for g in got]
                    side[label] = {"ns": median_or_none(ns), "rounds_ns": ns,
                                   "gap_ns": median_or_none([g["gap_ns"] for g in got]),
                                   "kernel": got[0]["kernel"] if got else None}
                t = side[TORCH]["ns"]
                for label in labels:
                    s = side[label]
                    s["ratio"] = s["ns"] / t if s["ns"] and t else None
                    s["gbps"] = moved / s["ns"] if s["ns"] else None
                ours = side[SHIPPED]
                rows.append({"pattern": pat, "dtype": d, "n": n,
                             "crossbench_ns": ours["ns"], "torch_ns": t, "ratio": ours["ratio"], "gbps": ours["gbps"],
                             "crossbench_rounds_ns": ours["rounds_ns"], "torch_rounds_ns": side[TORCH]["rounds_ns"],
                             "crossbench_gap_ns": ours["gap_ns"], "torch_gap_ns": side[TORCH]["gap_ns"],
                             "crossbench_kernel": ours["kernel"],
                             "candidates": {c: side[c] for c in labels if c != SHIPPED}})
    return rows


def size_class_summary(rows, labels, sizes):
    """Per n, over every dtype and pattern: each configuration's geometric-mean and worst ratio to
    PyTorch's; the configuration with the lowest geometric mean beside the shipped one."""
    out = []
    for n in sizes:
        score = {}
        for label in labels:
            ratios = [(r["ratio"] if label == SHIPPED else r["candidates"][label]["ratio"]) for r in rows if r["n"] == n]
            ratios = [x for x in ratios if x]
            if ratios:
                score[label] = (math.exp(sum(math.log(x) for x in ratios) / len(ratios)), max(ratios))
        if SHIPPED in score:
            best = min(score, key=lambda k: score[k][0])
            out.append({"n": n, "shipped_geomean": score[SHIPPED][0], "shipped_worst": score[SHIPPED][1],
                        "best": best, "best_geomean": score[best][0], "best_worst": score[best][1]})
    return out


def placement_of_round(r, swap):
    """0: PyTorch writes buffer A, crossbench B; 1 (--swap-outputs, rounds 2, 3 mod 4): swapped."""
    return (r // 2) % 2 if swap else 0


def placement_summary(per_round, placements, patterns, dtypes, sizes, labels):
    """--swap-outputs: per (pattern, dtype, n, configuration of ours), the ratio to PyTorch's in
    the rounds of each placement (median of ours over those rounds / median of PyTorch's): r_B
    where ours writes buffer B (placement 0), r_A where it writes A (placement 1); with
    t(side, buffer) = k_side * beta_buffer, kernel = sqrt(r_B r_A) (k_ours / k_torch) and buffer =
    sqrt(r_B / r_A) (beta_B / beta_A: how much slower writing B is than writing A)."""
    rows = []
    for pat in patterns:
        for d in dtypes:
            for n in sizes:
                for label in labels:
                    r = {}
                    for p, buf in ((0, "B"), (1, "A")):
                        rounds = [i for i, q in enumerate(placements) if q == p]
                        ours = median_or_none([per_round[i][(pat, d, n, label)]["per_call_ns"] for i in rounds
                                               if (pat, d, n, label) in per_round[i]])
                        theirs = median_or_none([per_round[i][(pat, d, n, TORCH)]["per_call_ns"] for i in rounds
                                                 if (pat, d, n, TORCH) in per_round[i]])
                        r[buf] = ours / theirs if ours and theirs else None
                    both = r["A"] is not None and r["B"] is not None
                    rows.append({"pattern": pat, "dtype": d, "n": n, "config": label, "ratio_ours_writes_B": r["B"],
                                 "ratio_ours_writes_A": r["A"],
                                 "kernel_factor": math.sqrt(r["B"] * r["A"]) if both else None,
                                 "buffer_factor_B_over_A": math.sqrt(r["B"] / r["A"]) if both else None})
    return rows


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def markdown(meta, rows, classes, mismatches, placement_rows=None):
    cands = meta["candidates"]
    shipped = sorted(set(meta["shipped_configs"].values()))
    md = [f"# crossbench add vs PyTorch {meta['torch']} on {meta['gpu']}, {meta['utc']}\n",
          f"Per-call kernel time (CUPTI, one torch.profiler session per round), median over {meta['rounds']} "
          f"interleaved rounds (tools/lab/add_vs_torch.py). Both sides launched from the same Python loop on one "
          f"torch stream, same inputs: eager = one launch per iteration; graph = {meta['calls']} launches captured "
          f"into one CUDA graph and replayed; isolated = a synchronize after each launch. crossbench = bench's add_launch_config ({', '.join(shipped)}); "
          f"{'outputs swapped in rounds 2, 3 (mod 4), the table after the gaps; ' if meta.get('swap_outputs') else ''}"
          f"candidate columns: us (ratio to PyTorch). SM clock start {meta['clocks'][0].get('sm_mhz', '-')} MHz, "
          f"end {meta['clocks'][-1].get('sm_mhz', '-')} MHz.\n",
          *([f"GPU {meta['environment'].get('gpu_uuid', '-')} "
             f"({', '.join(f'{k} {v}' for k, v in meta['environment'].get('gpu', {}).items()) or '-'}); LD_LIBRARY_PATH "
             f"'{meta['environment'].get('ld_library_path', '')}'; libraries mapped: "
             f"{', '.join(meta['environment'].get('libraries', [])) or '-'}.\n"] if meta.get("environment") else []),
          "| launch pattern | dtype | n | crossbench us | PyTorch us | ratio (target <= 1.00) | crossbench GB/s | "
          + " | ".join(cands) + (" |" if cands else ""),
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |" + " ---: |" * len(cands)]
    for r in rows:
        ok = "" if r["ratio"] is None else (" met" if r["ratio"] <= 1.0 else " MISSED")
        cells = [f"{fmt(r['candidates'][c]['ns'] and r['candidates'][c]['ns'] / 1e3, '.3f')} "
                 f"({fmt(r['candidates'][c]['ratio'], '.3f')})" for c in cands]
        md.append(f"| {r['pattern']} | {r['dtype']} | {r['n']} | {fmt(r['crossbench_ns'] and r['crossbench_ns'] / 1e3, '.3f')} | "
                  f"{fmt(r['torch_ns'] and r['torch_ns'] / 1e3, '.3f')} | {fmt(r['ratio'], '.3f')}{ok} | "
                  f"{fmt(r['gbps'], '.0f')} |" + "".join(f" {c} |" for c in cells))
    md += ["", "Per size, over every dtype and pattern: ratio to PyTorch's, geometric mean / worst.", "",
           "| n | crossbench (shipped) | fastest configuration | its ratio |", "| ---: | ---: | --- | ---: |"]
    for c in classes:
        md.append(f"| {c['n']} | {c['shipped_geomean']:.3f} / {c['shipped_worst']:.3f} | {c['best']} | "
                  f"{c['best_geomean']:.3f} / {c['best_worst']:.3f} |")
    md += ["", "Launch pattern check: mean idle gap between consecutive kernels of a block, us "
           "(eager: the host's launch time shows; graph: back to back).", "",
           "| launch pattern | dtype | n | crossbench gap | PyTorch gap | crossbench kernel |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        md.append(f"| {r['pattern']} | {r['dtype']} | {r['n']} | {fmt(r['crossbench_gap_ns'] and r['crossbench_gap_ns'] / 1e3, '.3f')} | "
                  f"{fmt(r['torch_gap_ns'] and r['torch_gap_ns'] / 1e3, '.3f')} | {r['crossbench_kernel']} |")
    md.append("")
    if placement_rows:
        md += ["Output buffer placement (--swap-outputs): ratio to PyTorch's in the rounds where crossbench writes "
               "buffer B (PyTorch A) and in those where it writes A (PyTorch B), medians over each placement's "
               f"{meta['rounds'] // 2} rounds; with t(side, buffer) = k_side x beta_buffer: kernel = sqrt(r_B r_A) "
               "(the kernels' own ratio), buffer = sqrt(r_B / r_A) (writing B over writing A). A gap that "
               "follows the buffer shows as kernel 1.000 and buffer != 1.", "",
               "| launch pattern | dtype | n | configuration | r_B (crossbench writes B) | r_A (crossbench writes A) | "
               "kernel factor | buffer factor B/A |", "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
        for p in placement_rows:
            md.append(f"| {p['pattern']} | {p['dtype']} | {p['n']} | {p['config']} | {fmt(p['ratio_ours_writes_B'], '.4f')} | "
                      f"{fmt(p['ratio_ours_writes_A'], '.4f')} | {fmt(p['kernel_factor'], '.4f')} | "
                      f"{fmt(p['buffer_factor_B_over_A'], '.4f')} |")
        md.append("")
    if mismatches:
        md.append(f"**Outputs that differ from torch.add's: {len(mismatches)}** (configuration, dtype, n, after, elements):")
        md += [f"- {m['config']} {m['dtype']} {m['n']} after {m['after']}: {m['elements']} elements" for m in mismatches]
    else:
        md.append(f"Every configuration's output equals torch.add's bit for bit ({meta['checked_outputs']} outputs "
                  "checked: each configuration, dtype and size after an eager call and after its graph's first replay"
                  f"{', in both placements' if meta.get('swap_outputs') else ''}).")
    return "\n".join(md) + "\n"


def write_whole(path, text):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


# ---- GPU side (torch) -------------------------------------------------------------------------

def gpu_clocks(torch):
    """SM clock (torch.cuda.clock_rate, NVML) and nvidia-smi's clocks, power and event reasons."""
    got = {"utc": time.strftime("%H:%M:%S", time.gmtime())}
    try:
        got["sm_mhz"] = torch.cuda.clock_rate()
    except Exception as e:  # pynvml missing or NVML refused: nvidia-smi below still answers
        got["clock_rate_error"] = str(e).splitlines()[0][:120]
    q = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,clocks_event_reasons.active"
    try:
        p = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits", "-i",
                            os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]],
                           capture_output=True, text=True, timeout=20)
        if p.returncode == 0 and p.stdout.strip():
            vals = [v.strip() for v in p.stdout.strip().splitlines()[0].split(",")]
            got["nvidia_smi"] = dict(zip(q.split(","), vals))
            got.setdefault("sm_mhz", vals[0])
        else:
            got["nvidia_smi_error"] = (p.stderr or p.stdout).strip()[:120]
    except (OSError, subprocess.TimeoutExpired) as e:
        got["nvidia_smi_error"] = str(e)[:120]
    return got


def process_environment(torch, maps_path="/proc/self/maps"):
    """What can make the same kernels run differently from one machine or set-up to another (run9
    of results/h200/speed-2026-12-01 saw every crossbench configuration 2-3% behind where another
    H200 saw 0.3-0.8%): the GPU's UUID, LD_LIBRARY_PATH, and the CUDA runtime, CUPTI, driver and
    shim libraries this process has mapped (paths from /proc/self/maps, sorted, each once)."""
    env = {"ld_library_path": os.environ.get("LD_LIBRARY_PATH", "")}
    try:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["gpu_uuid"] = str(props.uuid)
        # Also what tells two H200s apart beyond their UUID (the same figures on every H200 so far;
        # recorded so that a machine that differs shows it): SMs, L2, memory.
        env["gpu"] = {k: getattr(props, k) for k in ("multi_processor_count", "L2_cache_size", "total_memory")
                      if hasattr(props, k)}
    except Exception as e:  # older torch: no uuid attribute
        env["gpu_uuid_error"] = str(e).splitlines()[0][:120]
    libs = set()
    try:
        with open(maps_path) as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if any(k in os.path.basename(path) for k in ("libcudart", "libcupti", "libcuda.so", "libxb_add_shim")):
                    libs.add(path)
    except OSError as e:
        env["maps_error"] = str(e)[:120]
    env["libraries"] = sorted(libs)
    return env


def split_grid_cap(name):
    """("v4/t256/default", 1056) of "v4/t256/default@g1056"; (name, 0) without the suffix."""
    base, sep, cap = name.partition("@g")
    if not sep:
        return name, 0
    if not cap.isdigit() or int(cap) < 1:
        raise UsageError(f"--candidates: '{name}': the grid cap after '@g' must be a whole number of blocks >= 1")
    return base, int(cap)


class Shim:
    """libxb_add_shim.so through ctypes (tests/perf/add_shim.cpp)."""

    def __init__(self, path):
        import ctypes
        self.ct = ctypes
        self.lib = ctypes.CDLL(os.path.abspath(path))
        L = self.lib
        L.xb_add_last_error.restype = ctypes.c_char_p
        L.xb_add_dtype.argtypes = [ctypes.c_char_p]
        L.xb_add_launch.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                                    ctypes.c_void_p] + [ctypes.c_int] * 6
        L.xb_add_config.argtypes = ([ctypes.c_int, ctypes.c_longlong] + [ctypes.c_int] * 5 +
                                    [ctypes.c_char_p, ctypes.c_size_t])
        L.xb_add_parse.argtypes = [ctypes.c_char_p] + [ctypes.POINTER(ctypes.c_int)] * 5
        self.launch = L.xb_add_launch

    def error(self, rc):
        return f"error {rc}: {self.lib.xb_add_last_error().decode()}"

    def dtype(self, name):
        code = self.lib.xb_add_dtype(name.encode())
        if code < 0:
            raise UsageError(self.lib.xb_add_last_error().decode())
        return code

    def parse(self, name):
        """(threads, vectors, policy code, variant code, residency cap, max blocks) of a
        tuning-space name, with an optional "@gBLOCKS" suffix: the grid capped at BLOCKS (a
        persistent, grid-stride launch; tests/perf/add_shim.cpp); max blocks 0 without it (the
        device's limit, bench's)."""
        base, blocks = split_grid_cap(name)
        fields = [self.ct.c_int() for _ in range(5)]
        rc = self.lib.xb_add_parse(base.encode(), *(self.ct.byref(f) for f in fields))
        if rc:
            raise UsageError(f"--candidates: {self.lib.xb_add_last_error().decode()}")
        return (*(f.value for f in fields), blocks)

    def config_name(self, dtype_code, count, tvpk):
        buf = self.ct.create_string_buffer(64)
        rc = self.lib.xb_add_config(dtype_code, count, *tvpk[:5], buf, 64)
        if rc:
            raise SystemExit(f"xb_add_config: {self.error(rc)}")
        return buf.value.decode()


class Point:
    """One (dtype, n): shared random inputs, two output buffers (A, allocated first, and B), and
    every side's callable and graph per placement: calls[(label, placement)],
    graphs[(label, placement)]; placement 0: PyTorch writes A, ours B; 1: swapped."""

    def __init__(self, torch, vs_torch, shim, stream, dtype, n, configs, int_view, placements):
        self.torch, self.dtype, self.n = torch, dtype, n
        dt = vs_torch.DTYPES[dtype]
        self.a, self.b = vs_torch.rand((n, n), dt), vs_torch.rand((n, n), dt)
        self.outs = (torch.empty_like(self.a), torch.empty_like(self.a))  # buffers A, B
        torch.cuda.synchronize()  # the inputs were drawn on the default stream; the sides use `stream`
        self.int_view = int_view
        code, count, sp = shim.dtype(dtype), n * n, stream.cuda_stream
        pa, pb = self.a.data_ptr(), self.b.data_ptr()
        launch = shim.launch
        self.calls = {}
        for place in placements:
            pc = self.ours_out(place).data_ptr()
            for label, tvpk in configs.items():
                def ours(tvpk=tvpk, label=label, pc=pc):
                    rc = launch(code, pa, pb, pc, count, sp, *tvpk)
                    if rc:
                        raise SystemExit(f"xb_add_launch {dtype} {n} {label}: {shim.error(rc)}")
                self.calls[(label, place)] = ours
            a, b, c = self.a, self.b, self.torch_out(place)
            self.calls[(TORCH, place)] = lambda a=a, b=b, c=c: torch.add(a, b, out=c)
        self.graphs = {}

    def torch_out(self, place):
        return self.outs[place]

    def ours_out(self, place):
        return self.outs[1 - place]

    def mismatches(self, place):
        """Elements where ours differs from PyTorch's output, bit for bit."""
        iv = self.int_view
        return int((self.ours_out(place).view(iv) != self.torch_out(place).view(iv)).sum().item())

    def poison(self, place):
        self.ours_out(place).view(self.int_view).fill_(-1)  # all bits set: NaN, never a sum of finite inputs


def setup(torch, vs_torch, shim, stream, args, configs, int_views, placements):
    """Every point's tensors, the bit-for-bit check of each configuration in each placement
    (eager, then after its graph's first replay, which also uploads the graph) and the graphs."""
    points, mismatches, checked = {}, [], 0
    for d in args.dtypes:
        for n in args.sizes:
            pt = Point(torch, vs_torch, shim, stream, d, n, configs[d][n], int_views[d], placements)
            for place in placements:
                def check(label, after, run):
                    nonlocal checked
                    with torch.cuda.stream(stream):  # everything on the one stream, in order
                        pt.poison(place)
                        run()
                        bad = pt.mismatches(place)
                    checked += 1
                    if bad:
                        where = "" if len(placements) == 1 else f", crossbench writing buffer {'BA'[place]}"
                        mismatches.append({"config": label, "dtype": d, "n": n, "after": after + where, "elements": bad})

                with torch.cuda.stream(stream):
                    pt.calls[(TORCH, place)]()
                for label in configs[d][n]:
                    # Three calls: the first loads the kernel (lazy loading), outside any capture.
                    check(label, "eager call", lambda call=pt.calls[(label, place)]: [call() for _ in range(3)])
                for label in list(configs[d][n]) + [TORCH]:
                    call = pt.calls[(label, place)]
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g, stream=stream):
                        for _ in range(args.calls):
                            call()
                    pt.graphs[(label, place)] = g
                    if label == TORCH:
                        with torch.cuda.stream(stream):
                            g.replay()  # the first replay uploads the graph
                    else:
                        check(label, "graph replay", g.replay)
            torch.cuda.synchronize()
            points[(d, n)] = pt
    return points, mismatches, checked


def run_round(torch, vs_torch, stream, points, args, labels, r):
    """One profiler session: per pattern, dtype and n, every side warmed up then timed, sides in
    label order (reversed in odd rounds), each writing its buffer of the round's placement
    (placement_of_round). Returns {(pattern, dtype, n, label): block_stats}."""
    sides = labels + [TORCH]
    if r % 2:
        sides = sides[::-1]
    place = placement_of_round(r, args.swap_outputs)
    blocks = []
    with vs_torch.profile(activities=[vs_torch.ProfilerActivity.CUDA]) as prof:
        with torch.cuda.stream(stream):
            for pat in args.patterns:
                for d in args.dtypes:
                    for n in args.sizes:
                        pt = points[(d, n)]
                        for label in sides:
                            kind = "torch" if label == TORCH else "ours"
                            if pat in ("eager", "isolated"):
                                call = pt.calls[(label, place)]
                                for _ in range(args.warmup_calls):
                                    call()
                                torch.cuda.synchronize()
                                blocks.append((None, kind, args.warmup_calls))
                                for _ in range(args.calls):
                                    call()
                                    if pat == "isolated":
                                        torch.cuda.synchronize()
                            else:
                                g = pt.graphs[(label, place)]
                                g.replay()
                                torch.cuda.synchronize()
                                blocks.append((None, kind, args.calls))
                                g.replay()
                            torch.cuda.synchronize()
                            blocks.append(((pat, d, n, label), kind, args.calls))
    blocks = [b for b in blocks if b[2] > 0]
    kernels = [(e["ts"], e["dur"], e["name"]) for e in vs_torch.device_records(prof) if e["cat"] == "kernel"]
    try:
        return assign_blocks(kernels, blocks)
    except ValueError as e:
        raise SystemExit(f"round {r}: {e}")


def main(argv=None):
    try:
        args = parse_args(argv)
        import torch
        if not torch.cuda.is_available():
            raise UsageError("no CUDA device (torch.cuda.is_available() is False)")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import vs_torch  # rand (fp32-drawn inputs, as crossbench's), DTYPES, profile, device_records
        try:
            shim = Shim(args.shim)
        except OSError as e:
            raise UsageError(f"--shim: {e}")
        parsed = {c: shim.parse(c) for c in args.candidates}
        need = sum(4 * n * n * BYTES[d] for d in args.dtypes for n in args.sizes)  # a, b, two outputs
        free, _ = torch.cuda.mem_get_info()
        if need > 0.9 * free:
            raise UsageError(f"the points need {need / 2**30:.1f} GiB of device memory, {free / 2**30:.1f} GiB free")
    except UsageError as e:
        print(f"add_vs_torch.py: {e}", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    int_views = {"bf16": torch.int16, "fp16": torch.int16, "fp32": torch.int32}
    labels = [SHIPPED] + args.candidates
    configs, shipped_names = {}, {}
    for d in args.dtypes:
        configs[d] = {}
        for n in args.sizes:
            configs[d][n] = {SHIPPED: BENCH_OWN, **parsed}
            shipped_names[f"{d}/{n}"] = shim.config_name(shim.dtype(d), n * n, BENCH_OWN)
    stream = torch.cuda.Stream()
    clocks = [gpu_clocks(torch)]
    t0 = time.perf_counter()
    placements = sorted({placement_of_round(r, args.swap_outputs) for r in range(args.rounds)})
    points, mismatches, checked = setup(torch, vs_torch, shim, stream, args, configs, int_views, placements)
    print(f"setup: {len(points)} points, {sum(len(p.graphs) for p in points.values())} graphs, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    # Out of the idle clock before round 0: 1 s of back-to-back PyTorch adds at the largest point.
    big = points[(args.dtypes[0], max(args.sizes))]
    t1 = time.perf_counter()
    with torch.cuda.stream(stream):
        while time.perf_counter() - t1 < 1.0:
            big.graphs[(TORCH, 0)].replay()
            torch.cuda.synchronize()
    per_round = []
    for r in range(args.rounds):
        t1 = time.perf_counter()
        per_round.append(run_round(torch, vs_torch, stream, points, args, labels, r))
        clocks.append(gpu_clocks(torch))
        print(f"round {r}: {time.perf_counter() - t1:.1f} s, SM clock {clocks[-1].get('sm_mhz')} MHz",
              file=sys.stderr, flush=True)
    rows = summarize(per_round, args.patterns, args.dtypes, args.sizes, labels)
    classes = size_class_summary(rows, labels, args.sizes)
    round_places = [placement_of_round(r, args.swap_outputs) for r in range(args.rounds)]
    place_rows = (placement_summary(per_round, round_places, args.patterns, args.dtypes, args.sizes, labels)
                  if args.swap_outputs else [])
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds, "calls": args.calls,
            "warmup_calls": args.warmup_calls, "patterns": args.patterns, "candidates": args.candidates, "shipped_configs": shipped_names,
            "swap_outputs": args.swap_outputs, "round_placements": ["crossbench writes " + "BA"[p] for p in round_places],
            "clocks": clocks, "checked_outputs": checked, "seconds": time.perf_counter() - t0,
            "environment": process_environment(torch)}
    text = markdown(meta, rows, classes, mismatches, place_rows)
    os.makedirs(args.out, exist_ok=True)
    write_whole(os.path.join(args.out, "add_vs_torch.md"), text)
    write_whole(os.path.join(args.out, "add_vs_torch.json"),
                json.dumps({**meta, "rows": rows, "size_classes": classes, "placement_rows": place_rows,
                            "mismatches": mismatches}, indent=1) + "\n")
    print(text)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
