"""Pictures of crossbench run folders and comparisons (docs/compare.md, "Pictures"); matplotlib only.

    samples.png   one panel per fixture of one run folder: every sample per call in the order it was
                  taken, the median and its interval (events.json stats.median_ci), and the SM clock
                  of each sample on a second axis where the run recorded it (timing.sample_sm_clock_mhz,
                  optional), else the NVML clocks before and after sampling in the panel's title
    compare.png   one panel per fixture `bench compare` compared (compare.json): run A's and run B's
                  samples side by side (violins with their medians), titled with the verdict and the
                  shift with its interval

This module imports nothing of crossbench's (scripts/plot_compare.py loads it by path, so that a
checkout without the built module can draw), and matplotlib only when drawing: plots_available()
says whether it can. Sample times are drawn in us (files hold ns).
"""
import importlib.util
import json
import math
import os


class PlotInputError(Exception):
    """A run folder or compare.json that cannot be drawn, in one line."""


def plots_available():
    """Whether matplotlib is importable here."""
    return importlib.util.find_spec("matplotlib") is not None


def _load_json(path, fmt):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise PlotInputError(f"{path}: cannot read: {e.strerror}")
    except ValueError as e:
        raise PlotInputError(f"{path}: not JSON: {e}")
    meta = doc.get("crossbench") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise PlotInputError(f'{path}: not a {fmt}.json (crossbench.format is not "{fmt}")')
    return doc


def fixture_key(fixture):
    """'<name> (<mode>[, graph])', as bench compare pairs fixtures (bench/compare/compare.h)."""
    timing = fixture.get("timing") or {}
    mode = timing.get("mode", "?") + (", graph" if timing.get("graph") else "")
    return f"{fixture.get('name', '?')} ({mode})"


def read_run(run_dir):
    """The sampled fixtures of a run folder's events.json: a list of dicts with key, samples_us,
    clock_mhz (per sample, or None), median_us, ci_us ((low, high) or None), nvml (text)."""
    doc = _load_json(os.path.join(run_dir, "events.json"), "events")
    out = []
    for f in doc.get("fixtures", []):
        timing = f.get("timing") or {}
        samples = timing.get("samples_ns") or []
        if not samples:
            continue
        stats = f.get("stats") or {}
        ci = stats.get("median_ci") or {}
        clocks = timing.get("sample_sm_clock_mhz")
        before, after = timing.get("gpu_before") or {}, timing.get("gpu_after") or {}
        nvml = ""
        if before.get("valid") or after.get("valid"):
            nvml = f"NVML SM clock {before.get('sm_clock_mhz', '?')} -> {after.get('sm_clock_mhz', '?')} MHz"
        ordered = sorted(samples)
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        if isinstance(clocks, list) and len(clocks) == len(samples) and any(c is not None for c in clocks):
            clocks = [float("nan") if c is None else c for c in clocks]  # null: not measured (a gap in the line)
        else:
            clocks = None
        out.append({"key": fixture_key(f), "samples_us": [s / 1000 for s in samples],
                    "clock_mhz": clocks,
                    "median_us": stats.get("median_ns", median) / 1000,
                    "ci_us": (ci["low_ns"] / 1000, ci["high_ns"] / 1000) if ci.get("bounded") else None,
                    "nvml": nvml})
    if not out:
        raise PlotInputError(f"{run_dir}: events.json holds no sampled fixture")
    return out


def _grid(n):
    cols = min(4, n)
    return cols, int(math.ceil(n / cols))


def plot_samples(run_dir, png):
    """Writes `png`: the samples of every fixture of `run_dir` in time order (see the module doc)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fixtures = read_run(run_dir)
    cols, rows = _grid(len(fixtures))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, f in zip(axes.flat, fixtures):
        xs = range(len(f["samples_us"]))
        ax.plot(xs, f["samples_us"], ".", markersize=2, color="tab:blue", label="sample")
        ax.axhline(f["median_us"], color="black", linewidth=1, label="median")
        if f["ci_us"]:
            ax.axhspan(f["ci_us"][0], f["ci_us"][1], color="tab:orange", alpha=0.3, label="median's interval")
        ax.set_xlabel("sample (time order)")
        ax.set_ylabel("us per call")
        title = f["key"]
        if f["clock_mhz"]:
            twin = ax.twinx()
            twin.plot(xs, f["clock_mhz"], "-", linewidth=0.8, color="tab:red", alpha=0.7)
            twin.set_ylabel("SM clock (MHz)", color="tab:red")
        elif f["nvml"]:
            title += "\n" + f["nvml"]
        ax.set_title(title, fontsize=8)
    for ax in list(axes.flat)[len(fixtures):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6, loc="upper right")
    fig.suptitle(f"samples of {run_dir}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _run_dir(compare_dir, given):
    """A run folder named in compare.json: as written (relative to the working directory), else
    relative to the compare folder."""
    if os.path.isdir(given):
        return given
    beside = os.path.join(compare_dir, given)
    if os.path.isdir(beside):
        return beside
    raise PlotInputError(f"run folder {given} (named in compare.json) not found; pass --runs A B")


def plot_compare(compare_dir, png, runs=None):
    """Writes `png`: run A's and run B's samples side by side per compared fixture (compare.json
    in `compare_dir`; `runs`: the (A, B) folders when they moved since)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    doc = _load_json(os.path.join(compare_dir, "compare.json"), "compare")
    if runs is None:
        runs = (_run_dir(compare_dir, doc["runs"]["a"]["dir"]), _run_dir(compare_dir, doc["runs"]["b"]["dir"]))
    a = {f["key"]: f for f in read_run(runs[0])}
    b = {f["key"]: f for f in read_run(runs[1])}
    compared = [c for c in doc.get("fixtures", []) if c["key"] in b and
                any(k.split(" (")[0] == c["name"] for k in a)]
    if not compared:
        raise PlotInputError(f"{compare_dir}: compare.json compares no fixture")
    cols, rows = _grid(len(compared))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax, c in zip(axes.flat, compared):
        fa = a.get(c["key"]) or next(f for k, f in a.items() if k.split(" (")[0] == c["name"])
        fb = b[c["key"]]
        parts = ax.violinplot([fa["samples_us"], fb["samples_us"]], showmedians=True, showextrema=False)
        for body, colour in zip(parts["bodies"], ("tab:blue", "tab:orange")):
            body.set_facecolor(colour)
        ax.set_xticks([1, 2])
        ax.set_xticklabels([f"A ({c['mode_a']})", f"B ({c['mode_b']})"], fontsize=7)
        ax.set_ylabel("us per call")
        ax.set_title(f"{c['name']}: {c['verdict']}\nshift {c['shift_pct']:+.2f}% "
                     f"[{c['low_pct']:+.2f}%, {c['high_pct']:+.2f}%], threshold {c['threshold_pct']:g}%", fontsize=8)
    for ax in list(axes.flat)[len(compared):]:
        ax.axis("off")
    fig.suptitle(f"bench compare: {doc['result']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def draw_comparison(compare_dir, runs=None):
    """compare.png in `compare_dir`, and samples-A.png and samples-B.png of the two run folders
    beside it (the run folders themselves are not written). Returns the paths written."""
    doc = _load_json(os.path.join(compare_dir, "compare.json"), "compare")
    if runs is None:
        runs = (_run_dir(compare_dir, doc["runs"]["a"]["dir"]), _run_dir(compare_dir, doc["runs"]["b"]["dir"]))
    written = [os.path.join(compare_dir, "compare.png")]
    plot_compare(compare_dir, written[0], runs)
    for label, run in zip("AB", runs):
        written.append(os.path.join(compare_dir, f"samples-{label}.png"))
        plot_samples(run, written[-1])
    return written
