#!/usr/bin/env python3
"""Plots of one crossbench sweep (sweep.json, written by `bench sweep`; docs/metrics.md, "Sweeps").

usage: plot_sweep.py SWEEP [--out DIR]

  SWEEP   sweep.json, or the folder that holds it
  --out   folder for the PNGs (default: the folder of sweep.json)

Writes three PNGs:
  time_vs_size.png  time per call vs size (log-log), one panel per op: CUPTI kernel time, cudaEvent
                    time and host API time per call; overhead-bound sizes shaded
  roofline.png      every measured point (achieved TFLOP/s against FLOP/B) under the roofs of the
                    measured ceilings (solid) and the datasheet figures (dashed); with a counters.json
                    beside sweep.json (bench sweep --counters), each point also where the hardware
                    counters put it (hollow: counted FLOPs / counted DRAM bytes, counted FLOPs per
                    CUPTI kernel time), joined to its modeled point; counted FLOPs are the executed
                    ones, a GEMM's tile padding included (docs/metrics.md, "Tile quantization")
  busy_vs_size.png  GPU busy fraction of the eager window vs size, with the overhead threshold and
                    each op's crossover size

Exit codes: 0 written, 2 unusable input (one line on stderr), 3 matplotlib missing.
"""
import argparse
import json
import math
import os
import sys

PLOTS = ("time_vs_size.png", "roofline.png", "busy_vs_size.png")
REGIME_MARKERS = {"overhead-bound": "o", "memory-bound": "s", "compute-bound": "^"}


class InputError(Exception):
    pass


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "sweep.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except ValueError as e:
        raise InputError(f"{path}: not JSON: {e}")
    meta = doc.get("crossbench") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != "sweep":
        raise InputError(f'{path}: not a sweep.json (crossbench.format is not "sweep")')
    for key in ("points", "ceilings", "rules", "crossovers", "device"):
        if key not in doc:
            raise InputError(f'{path}: missing key "{key}"')
    points = []
    for i, p in enumerate(doc["points"]):
        if p.get("status") != "ok":
            continue
        try:
            q = {k: p[k] for k in ("op", "dtype", "n", "kernel_ns", "event_ns", "host_api_ns", "gpu_busy",
                                     "intensity", "tflops", "regime")}
            for k in ("n", "kernel_ns", "event_ns", "host_api_ns", "gpu_busy", "intensity", "tflops"):
                q[k] = float(q[k])
                if not math.isfinite(q[k]):
                    raise ValueError(k)
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: points[{i}]: missing or bad value {e}")
        points.append(q)
    if not points:
        raise InputError(f"{path}: no measured points")
    return path, doc, points


def load_counters(folder):
    """(op, dtype, n) -> (FLOPs, DRAM bytes) per call from counters.json in `folder` (bench
    --counters); {} when there is none or the pass was unavailable. Only per-fixture "per_call"
    figures of fixtures without an error are used."""
    path = os.path.join(folder, "counters.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError:
        return {}
    except ValueError as e:
        raise InputError(f"{path}: not JSON: {e}")
    if not isinstance(doc, dict) or (doc.get("crossbench") or {}).get("format") != "counters":
        raise InputError(f'{path}: not a counters.json (crossbench.format is not "counters")')
    out = {}
    if doc.get("status") != "collected":
        return out
    for f in doc.get("fixtures", []):
        pc = f.get("per_call")
        if f.get("error") or not isinstance(pc, dict):
            continue
        flops, dram = float(pc.get("flops", 0)), float(pc.get("dram_bytes", 0))
        if flops > 0 and dram > 0 and math.isfinite(flops) and math.isfinite(dram):
            out[(f["op"], f["dtype"], float(f["size"]))] = (flops, dram)
    return out


def series(points):
    """(op, dtype) -> points sorted by size, in order of first appearance."""
    out = {}
    for p in points:
        out.setdefault((p["op"], p["dtype"]), []).append(p)
    for v in out.values():
        v.sort(key=lambda p: p["n"])
    return out


def title(doc, what):
    name = doc["device"].get("name", "GPU")
    t = f"{what}: {name}"
    if doc["crossbench"].get("synthetic"):
        t += " (SYNTHETIC DATA, not measured)"
    return t


def mark_synthetic(fig, doc):
    if doc["crossbench"].get("synthetic"):
        fig.text(0.5, 0.5, "SYNTHETIC", fontsize=60, color="red", alpha=0.12, ha="center", va="center",
                 rotation=30, transform=fig.transFigure)


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(int(s)) for s in sizes], rotation=45, fontsize=7)
    ax.minorticks_off()


def plot_time(plt, doc, points, out):
    groups = series(points)
    ops = []
    for op, _ in groups:
        if op not in ops:
            ops.append(op)
    cols = 2 if len(ops) > 1 else 1
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.6 * rows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, op in enumerate(ops):
        ax = axes[k // cols][k % cols]
        sizes = sorted({p["n"] for p in points if p["op"] == op})
        for j, ((o, dtype), ps) in enumerate(groups.items()):
            if o != op:
                continue
            c = colors[j % len(colors)]
            n = [p["n"] for p in ps]
            label = f" {dtype}" if len({d for (_, d) in groups}) > 1 else ""
            ax.plot(n, [p["kernel_ns"] / 1e3 for p in ps], "-o", color=c, ms=4, label="CUPTI kernel" + label)
            ax.plot(n, [p["event_ns"] / 1e3 for p in ps], "--x", color=c, ms=5, label="cudaEvent" + label)
            ax.plot(n, [p["host_api_ns"] / 1e3 for p in ps], ":", color="gray", label="host API per call" + label)
            for p in ps:
                if p["regime"] == "overhead-bound":
                    ax.axvspan(p["n"] / math.sqrt(2), p["n"] * math.sqrt(2), color="orange", alpha=0.08, lw=0)
        ax.set_yscale("log")
        size_axis(ax, sizes)
        ax.set_title(op)
        ax.set_xlabel("size n (n x n; GEMMs n x n x n)")
        ax.set_ylabel("time per call (us)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for k in range(len(ops), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(title(doc, "Time per call vs size (shaded: overhead-bound)"))
    mark_synthetic(fig, doc)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_roofline(plt, doc, points, out):
    ceil = doc["ceilings"]
    bw = float(ceil["bandwidth_gbps"])
    gemm = {k: float(v) for k, v in ceil["gemm_tflops"].items()}
    sheet = ceil.get("datasheet") or None
    ai = [p["intensity"] for p in points] + [f / b for f, b in (doc.get("_counters") or {}).values()]
    lo = min(ai + [1.0]) / 4
    hi = max(ai + [max(gemm.values()) * 1e3 / bw]) * 4
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    fig, ax = plt.subplots(figsize=(9, 6))
    for dtype, peak in gemm.items():
        ridge = peak * 1e3 / bw
        ax.plot(xs, [min(peak, x * bw / 1e3) for x in xs], "-", color="black", lw=1.5,
                label=f"{dtype} roof, measured: {peak:.0f} TFLOP/s, {bw:.0f} GB/s (ridge {ridge:.0f} FLOP/B)")
        if sheet and dtype in sheet.get("tflops", {}):
            speak, sbw = float(sheet["tflops"][dtype]), float(sheet["bandwidth_gbps"])
            ax.plot(xs, [min(speak, x * sbw / 1e3) for x in xs], "--", color="gray", lw=1,
                    label=f"{dtype} roof, datasheet: {speak:.0f} TFLOP/s, {sbw:.0f} GB/s")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    placed = []  # (log10 x, log10 y) of size labels already drawn: no label on top of another
    for j, ((op, dtype), ps) in enumerate(series(points).items()):
        c = colors[j % len(colors)]
        for regime, marker in REGIME_MARKERS.items():
            sel = [p for p in ps if p["regime"] == regime]
            if sel:
                ax.scatter([p["intensity"] for p in sel], [max(p["tflops"], 1e-6) for p in sel], marker=marker,
                           color=c, s=30, zorder=3)
        ax.plot([p["intensity"] for p in ps], [max(p["tflops"], 1e-6) for p in ps], "-", color=c, lw=0.6, alpha=0.6,
                label=f"{op}/{dtype}")
        for p in ps:
            at = (math.log10(p["intensity"]), math.log10(max(p["tflops"], 1e-6)))
            if any(abs(at[0] - q[0]) < 0.08 and abs(at[1] - q[1]) < 0.08 for q in placed):
                continue
            placed.append(at)
            ax.annotate(str(int(p["n"])), (p["intensity"], max(p["tflops"], 1e-6)), fontsize=6,
                        xytext=(3, -8), textcoords="offset points", color=c)
    counted = doc.get("_counters") or {}
    for j, ((op, dtype), ps) in enumerate(series(points).items()):
        c = colors[j % len(colors)]
        for p in ps:
            got = counted.get((op, dtype, p["n"]))
            if not got:
                continue
            x, y = got[0] / got[1], max(got[0] / p["kernel_ns"] / 1e3, 1e-6)
            ax.scatter([x], [y], marker=REGIME_MARKERS.get(p["regime"], "o"), facecolors="none", edgecolors=c, s=40,
                       zorder=3)
            ax.plot([p["intensity"], x], [max(p["tflops"], 1e-6), y], ":", color=c, lw=0.8)
    for regime, marker in REGIME_MARKERS.items():
        ax.scatter([], [], marker=marker, color="gray", label=regime)
    if counted:
        ax.scatter([], [], marker="o", facecolors="none", edgecolors="gray",
                   label="hollow: hardware counters (executed FLOPs, tile padding included / counted DRAM bytes)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP / byte, each input read once, each output written once)")
    ax.set_ylabel("achieved TFLOP/s (CUPTI kernel time)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title(doc, "Roofline against measured ceilings"), fontsize=10)
    mark_synthetic(fig, doc)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_busy(plt, doc, points, out):
    threshold = float(doc["rules"]["busy_threshold"])
    crossovers = {(x["op"], x["dtype"]): x.get("size") for x in doc["crossovers"]}
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, ((op, dtype), ps) in enumerate(series(points).items()):
        c = colors[j % len(colors)]
        ax.plot([p["n"] for p in ps], [100 * p["gpu_busy"] for p in ps], "-o", color=c, ms=4, label=f"{op}/{dtype}")
        x = crossovers.get((op, dtype))
        hit = [p for p in ps if x is not None and p["n"] == x]
        if hit:
            ax.plot([x], [100 * hit[0]["gpu_busy"]], "*", color=c, ms=14, markeredgecolor="black")
    ax.axhline(100 * threshold, color="red", ls="--", lw=1, label=f"overhead-bound below {100 * threshold:.0f}%")
    ax.plot([], [], "*", color="gray", ms=12, markeredgecolor="black", label="crossover (first size not overhead-bound)")
    size_axis(ax, sorted({p["n"] for p in points}))
    ax.set_ylim(0, 105)
    ax.set_xlabel("size n")
    ax.set_ylabel("GPU busy (% of the eager window)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title(doc, "GPU busy fraction vs size"), fontsize=10)
    mark_synthetic(fig, doc)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep", help="sweep.json or the folder that holds it")
    ap.add_argument("--out", help="folder for the PNGs (default: beside sweep.json)")
    args = ap.parse_args(argv)
    try:
        path, doc, points = load(args.sweep)
    except InputError as e:
        print(f"plot_sweep: error: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_sweep: error: matplotlib is not installed (python3 -m pip install matplotlib; or run it with "
              "build/.venv/bin/python3, which scripts/test.sh sets up with matplotlib)", file=sys.stderr)
        return 3
    out = args.out or os.path.dirname(os.path.abspath(path))
    os.makedirs(out, exist_ok=True)
    try:
        doc["_counters"] = load_counters(os.path.dirname(os.path.abspath(path)))
    except InputError as e:
        print(f"plot_sweep: error: {e}", file=sys.stderr)
        return 2
    try:
        plot_time(plt, doc, points, os.path.join(out, PLOTS[0]))
        plot_roofline(plt, doc, points, os.path.join(out, PLOTS[1]))
        plot_busy(plt, doc, points, os.path.join(out, PLOTS[2]))
    except (KeyError, TypeError, ValueError) as e:
        print(f"plot_sweep: error: {path}: unusable value: {e!r}", file=sys.stderr)
        return 2
    for name in PLOTS:
        print(os.path.join(out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
