#!/usr/bin/env python3
"""nvbench beside crossbench on the same kernels, one table (issue 40; docs/vs-nvbench.md).

Reads what tools/lab/h200_vs_nvbench.sh recorded, listed in its steps file (tab-separated, one line
per step, a header line first):

    round  part  harness  mode  path  wall_s  exit  smi

- round: 1, 2, ...; part: `cpp` (xb_nvbench_ops against `bench`) or `py` (nvbench's Python API
  against crossbench.bench); harness: `nvbench` or `crossbench`; mode: `cold+batch` (one nvbench
  process runs both), `hot` or `cold`;
- path: nvbench's JSON (`--json`), or a crossbench run folder (events.json or events.json.gz), or a
  folder of run folders (crossbench.bench writes one per callable);
- wall_s: the step's process wall time in seconds; exit: its exit code;
- smi: `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active
  --format=csv,nounits -lms 200` during the step, or `-`.
Relative paths are taken from the steps file's folder.

Writes OUT/side_by_side.md and OUT/side_by_side.json: per part, per fixture and round, nvbench's
cold GPU time (median, its mean, its relative noise, its own mean SM clock) and Batch GPU time
beside crossbench's cold and hot medians with their 95% intervals (stats.median_ci) and NVML's
clocks and power before and after sampling; how far apart (crossbench / nvbench - 1) against the
precisions each states; each step's wall time, clocks and power; wall time per fixture (nvbench's
nv/cold/walltime and nv/batch/walltime, crossbench's timing.sampling_s) and in all per harness.

nvbench's JSON (nvbench/json_printer.cu, file version 1): benchmarks[].states[] with
axis_values [{name, type, value}] and summaries [{tag, data: [{name: "value", type, value}]}],
numbers written as strings, times in seconds, clocks in Hz.

Usage: side_by_side.py STEPS_TSV OUT_DIR. Exit 0 written; 2 bad input (one line, nothing written).
"""
import csv
import gzip
import json
import os
import statistics
import sys

COLUMNS = ("round", "part", "harness", "mode", "path", "wall_s", "exit", "smi")
PARTS = {"cpp": "C++: xb_nvbench_ops (nvbench) against bench", "py": "Python: nvbench's API against crossbench.bench"}
# NVML clock-event reasons that hold the clock down (nvml.h nvmlClocksEventReason*): the bits
# that matter here, named as NVML names them.
REASONS = {0x4: "SwPowerCap", 0x8: "HwSlowdown", 0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown",
           0x80: "HwPowerBrakeSlowdown"}


class BadInput(Exception):
    """An input that cannot be read; its message names the file and what is wrong."""


def summary_values(state):
    """{tag: value} of one nvbench state's summaries; each summary's "value" datum as a number."""
    out = {}
    for s in state.get("summaries") or []:
        for d in s.get("data") or []:
            if d.get("name") == "value":
                try:
                    out[s["tag"]] = float(d["value"]) if d.get("type") in ("float64", "int64") else d["value"]
                except (KeyError, ValueError):
                    pass
    return out


def fixture_of_state(state, path):
    """"op/dtype/n" from a state's axes Op, DType (default bf16) and N."""
    axes = {a.get("name"): a.get("value") for a in state.get("axis_values") or []}
    if "Op" not in axes or "N" not in axes:
        raise BadInput("%s: state %r has no Op and N axes" % (path, state.get("name")))
    return "%s/%s/%d" % (axes["Op"], axes.get("DType", "bf16"), int(axes["N"]))


def read_nvbench(path):
    """{fixture: figures} of one nvbench JSON file; times in ns, clock in MHz, noise a fraction."""
    try:
        with open(path) as f:
            root = json.load(f)
        benches = root["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInput("%s: not nvbench's JSON (%s)" % (path, e))
    out = {}
    for bench in benches:
        for state in bench.get("states") or []:
            key = fixture_of_state(state, path)
            if state.get("is_skipped"):
                out[key] = {"skipped": state.get("skip_reason", "skipped")}
                continue
            v = summary_values(state)

            def ns(tag):
                return v[tag] * 1e9 if isinstance(v.get(tag), float) else None

            out[key] = {
                "cold_median_ns": ns("nv/cold/time/gpu/median"), "cold_mean_ns": ns("nv/cold/time/gpu/mean"),
                "cold_noise": v.get("nv/cold/time/gpu/stdev/relative"), "cold_samples": v.get("nv/cold/sample_size"),
                "cold_sm_mhz": v["nv/cold/sm_clock_rate/mean"] / 1e6 if "nv/cold/sm_clock_rate/mean" in v else None,
                "batch_ns": ns("nv/batch/time/gpu/mean"), "batch_samples": v.get("nv/batch/sample_size"),
                "cold_wall_s": v.get("nv/cold/walltime"), "batch_wall_s": v.get("nv/batch/walltime")}
    meta = root.get("meta", {}).get("version", {}).get("nvbench", {})
    return out, {"nvbench": meta.get("git_version") or meta.get("string"),
                 "device": (root.get("devices") or [{}])[0].get("name")}


def events_files(path):
    """The events.json(.gz) of a run folder, or of each run folder inside `path`, sorted."""
    for name in ("events.json", "events.json.gz"):
        if os.path.isfile(os.path.join(path, name)):
            return [os.path.join(path, name)]
    if not os.path.isdir(path):
        raise BadInput("%s: no such run folder" % path)
    found = []
    for sub in sorted(os.listdir(path)):
        if os.path.isdir(os.path.join(path, sub)):
            found += [f for f in events_files(os.path.join(path, sub))]
    if not found:
        raise BadInput("%s: no events.json in it or its folders" % path)
    return found


def gpu_sample(g):
    """NVML's reading (events.json GpuClockSample) as (SM MHz, W, reason names), None if not read."""
    if not g or not g.get("valid", True):
        return None
    bits = int(g.get("throttle_reasons", 0))
    return {"sm_mhz": g.get("sm_clock_mhz"), "power_w": g.get("power_w"),
            "reasons": [n for b, n in sorted(REASONS.items()) if bits & b]}


def read_crossbench(path):
    """{fixture: figures} of a crossbench run folder (or folders); times in ns per call."""
    out = {}
    for f in events_files(path):
        try:
            with (gzip.open(f, "rt") if f.endswith(".gz") else open(f)) as fh:
                fixtures = json.load(fh)["fixtures"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise BadInput("%s: not crossbench's events.json (%s)" % (f, e))
        for fx in fixtures:
            st, t = fx.get("stats") or {}, fx.get("timing") or {}
            ci = st.get("median_ci") or {}
            out[fx["name"]] = {
                "median_ns": st.get("median_ns"), "half_width": ci.get("half_width") if ci.get("bounded") else None,
                "samples": st.get("count"), "stop": t.get("stop"), "mode": t.get("mode"),
                "launches_per_sample": t.get("launches_per_sample"), "sampling_s": t.get("sampling_s"),
                "before": gpu_sample(t.get("gpu_before")), "after": gpu_sample(t.get("gpu_after"))}
    return out


def read_smi(path):
    """SM clock and power over a step from nvidia-smi's CSV; None for `-` or an empty file."""
    if path is None:
        return None
    clocks, watts, bits, capped = [], [], 0, 0
    try:
        with open(path) as f:
            for row in csv.reader(f):
                if len(row) < 4 or row[0].strip() == "timestamp":
                    continue
                try:
                    clocks.append(float(row[1]))
                    watts.append(float(row[2]))
                    b = int(row[3].strip(), 16)
                except ValueError:
                    continue
                bits |= b
                capped += 1 if b & 0x4 else 0
    except OSError as e:
        raise BadInput("%s: %s" % (path, e))
    if not clocks:
        return None
    return {"readings": len(clocks), "sm_mhz_median": statistics.median(clocks), "sm_mhz_min": min(clocks),
            "sm_mhz_max": max(clocks), "power_w_median": statistics.median(watts), "power_w_max": max(watts),
            "power_cap_share": capped / len(clocks), "reasons": [n for b, n in sorted(REASONS.items()) if bits & b]}


def read_steps(tsv):
    """The steps file's rows as dicts (paths made absolute, smi None for `-`)."""
    base = os.path.dirname(os.path.abspath(tsv))
    try:
        with open(tsv) as f:
            rows = list(csv.reader(f, delimiter="\t"))
    except OSError as e:
        raise BadInput("%s: %s" % (tsv, e))
    if not rows or tuple(rows[0]) != COLUMNS:
        raise BadInput("%s: the first line must be the header %s" % (tsv, "\\t".join(COLUMNS)))
    steps = []
    for i, r in enumerate(rows[1:], 2):
        if len(r) != len(COLUMNS):
            raise BadInput("%s:%d: %d fields, not %d" % (tsv, i, len(r), len(COLUMNS)))
        s = dict(zip(COLUMNS, r))
        if s["part"] not in PARTS or s["harness"] not in ("nvbench", "crossbench"):
            raise BadInput("%s:%d: part %r or harness %r unknown" % (tsv, i, s["part"], s["harness"]))
        try:
            s["round"], s["wall_s"], s["exit"] = int(s["round"]), float(s["wall_s"]), int(s["exit"])
        except ValueError:
            raise BadInput("%s:%d: round, wall_s and exit must be numbers" % (tsv, i))
        s["path"] = os.path.join(base, s["path"])
        s["smi"] = None if s["smi"] == "-" else os.path.join(base, s["smi"])
        steps.append(s)
    return steps


def apart(xb_ns, nv_ns):
    """crossbench / nvbench - 1, or None where either is missing."""
    return xb_ns / nv_ns - 1 if xb_ns and nv_ns else None


def collect(steps):
    """Reads every step's files: (rows per fixture and round, step records, nvbench's metadata)."""
    rows, meta = {}, {}
    for s in steps:
        if s["exit"] != 0 and not os.path.exists(s["path"]):
            s["figures"] = None
            continue
        if s["harness"] == "nvbench":
            figs, meta = read_nvbench(s["path"])
        else:
            figs = read_crossbench(s["path"])
        s["figures"] = figs
        for fixture, fig in figs.items():
            row = rows.setdefault((s["part"], fixture, s["round"]),
                                  {"part": s["part"], "fixture": fixture, "round": s["round"]})
            row["nvbench" if s["harness"] == "nvbench" else "crossbench_" + s["mode"]] = fig
    for row in rows.values():
        nv, cold, hot = row.get("nvbench") or {}, row.get("crossbench_cold") or {}, row.get("crossbench_hot") or {}
        row["cold_apart"] = apart(cold.get("median_ns"), nv.get("cold_median_ns"))
        row["cold_stated"] = (nv.get("cold_noise") or 0) + (cold.get("half_width") or 0) if nv and cold else None
        row["hot_vs_batch_apart"] = apart(hot.get("median_ns"), nv.get("batch_ns"))
    order = {"cpp": 0, "py": 1}
    return [rows[k] for k in sorted(rows, key=lambda k: (order[k[0]], fixture_order(k[1]), k[2]))], meta


def fixture_order(name):
    """Sort key: size, then the op order of bench (matmul, add, addmm, addmm_bias1d)."""
    op, _, n = name.split("/") if name.count("/") == 2 else (name, "", "0")
    ops = ("matmul", "add", "addmm", "addmm_bias1d")
    return (int(n) if n.isdigit() else 0, ops.index(op) if op in ops else len(ops), op)


def build(tsv):
    """The whole comparison as one JSON-able dict."""
    steps = read_steps(tsv)
    rows, meta = collect(steps)
    step_out, walls = [], {}
    for s in steps:
        step_out.append({k: s[k] for k in ("round", "part", "harness", "mode", "wall_s", "exit")}
                        | {"path": os.path.basename(s["path"].rstrip("/")), "smi": read_smi(s["smi"]),
                           "read": s["figures"] is not None})
        walls.setdefault((s["part"], s["harness"]), 0.0)
        walls[(s["part"], s["harness"])] += s["wall_s"]
    return {"nvbench": meta, "rows": rows, "steps": step_out,
            "wall_s": [{"part": p, "harness": h, "wall_s": round(w, 3)} for (p, h), w in sorted(walls.items())]}


def us(ns):
    return "-" if ns is None else "%.3f" % (ns / 1e3)


def pct(x, signed=False):
    return "-" if x is None else ("%+.2f%%" if signed else "%.2f%%") % (100 * x)


def median_cell(fig):
    """"25.863 (+-0.03%)", "29.088 (no interval)" (files before the interval, or unbounded), or "-"."""
    if not fig or fig.get("median_ns") is None:
        return "-"
    hw = fig.get("half_width")
    return "%s (%s)" % (us(fig["median_ns"]), "no interval" if hw is None else "+-" + pct(hw))


def clock(sample):
    """"1980 MHz 459 W" (+ reasons) of one NVML reading, "-" if none."""
    if not sample:
        return "-"
    text = "%s MHz %.0f W" % (sample["sm_mhz"], sample["power_w"] or 0)
    return text + (" " + ",".join(sample["reasons"]) if sample["reasons"] else "")


def times_table(rows):
    """Markdown lines: per fixture and round, the four figures and how far apart they are."""
    out = ["| fixture | round | nvbench cold median (mean; noise) us | nvbench Batch GPU us | crossbench cold median "
           "(+-95%) us | crossbench hot median (+-95%) us | cold: xb / nv - 1 (stated) | hot: xb / Batch - 1 |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        nv, cold, hot = r.get("nvbench") or {}, r.get("crossbench_cold") or {}, r.get("crossbench_hot") or {}
        if "skipped" in nv:
            nv_cold = "skipped: " + nv["skipped"]
        elif nv.get("cold_median_ns") is None:
            nv_cold = "-"
        else:
            nv_cold = "%s (%s; %s)" % (us(nv["cold_median_ns"]), us(nv.get("cold_mean_ns")), pct(nv.get("cold_noise")))
        cold_apart = "-" if r["cold_apart"] is None else "%s (%s)" % (pct(r["cold_apart"], True), pct(r["cold_stated"]))
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            r["fixture"], r["round"], nv_cold, us(nv.get("batch_ns")), median_cell(cold), median_cell(hot), cold_apart,
            pct(r["hot_vs_batch_apart"], True)))
    return out


def clocks_table(rows):
    """Markdown lines: the SM clock and power each harness saw, and each fixture's wall time."""
    out = ["| fixture | round | nvbench cold: mean SM clock (its own) | crossbench cold: NVML before -> after | "
           "crossbench hot: NVML before -> after | wall s: nvbench cold + batch, crossbench cold, hot |",
           "| --- | ---: | ---: | --- | --- | --- |"]
    for r in rows:
        nv, cold, hot = r.get("nvbench") or {}, r.get("crossbench_cold") or {}, r.get("crossbench_hot") or {}
        nv_mhz = "-" if nv.get("cold_sm_mhz") is None else "%.0f MHz" % nv["cold_sm_mhz"]

        def s(x):
            return "-" if x is None else "%.2f" % x

        out.append("| %s | %d | %s | %s -> %s | %s -> %s | %s + %s, %s, %s |" % (
            r["fixture"], r["round"], nv_mhz, clock(cold.get("before")), clock(cold.get("after")),
            clock(hot.get("before")), clock(hot.get("after")), s(nv.get("cold_wall_s")), s(nv.get("batch_wall_s")),
            s(cold.get("sampling_s")), s(hot.get("sampling_s"))))
    return out


def steps_table(steps):
    """Markdown lines: each step's wall time, exit code, and the clock and power nvidia-smi read."""
    out = ["| round | part | harness | mode | exit | wall s | SM MHz median [min, max] | W median [max] | "
           "power-capped readings | clock-event reasons |",
           "| ---: | --- | --- | --- | ---: | ---: | --- | --- | ---: | --- |"]
    for s in steps:
        m = s["smi"]
        smi = ["-"] * 4 if not m else [
            "%.0f [%.0f, %.0f]" % (m["sm_mhz_median"], m["sm_mhz_min"], m["sm_mhz_max"]),
            "%.0f [%.0f]" % (m["power_w_median"], m["power_w_max"]), "%.0f%% of %d" % (100 * m["power_cap_share"],
                                                                                     m["readings"]),
            ",".join(m["reasons"]) or "none"]
        out.append("| %d | %s | %s | %s | %d | %.1f | %s |" % (s["round"], s["part"], s["harness"], s["mode"], s["exit"],
                                                              s["wall_s"], " | ".join(smi)))
    return out


def markdown(result):
    """side_by_side.md's text."""
    meta = result["nvbench"]
    lines = ["# nvbench beside crossbench", "",
             "nvbench %s on %s; tools/lab/nvbench/side_by_side.py (docs/vs-nvbench.md says how to read it)." % (
                 meta.get("nvbench") or "?", meta.get("device") or "?"), ""]
    for part, title in PARTS.items():
        rows = [r for r in result["rows"] if r["part"] == part]
        if not rows:
            continue
        lines += ["## " + title, "", "### Medians per call", ""] + times_table(rows)
        lines += ["", "### Clocks, power and wall time per fixture", ""] + clocks_table(rows) + [""]
    lines += ["## Steps (nvidia-smi every 200 ms during each)", ""] + steps_table(result["steps"])
    lines += ["", "## Wall time in all", "", "| part | harness | wall s |", "| --- | --- | ---: |"]
    lines += ["| %s | %s | %.1f |" % (w["part"], w["harness"], w["wall_s"]) for w in result["wall_s"]]
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 2:
        print("usage: side_by_side.py STEPS_TSV OUT_DIR", file=sys.stderr)
        return 2
    try:
        result = build(argv[0])
    except BadInput as e:
        print("side_by_side: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    with open(os.path.join(argv[1], "side_by_side.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    with open(os.path.join(argv[1], "side_by_side.md"), "w") as f:
        f.write(markdown(result))
    print("side_by_side: %d rows, %d steps into %s" % (len(result["rows"]), len(result["steps"]), argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
