#!/usr/bin/env python3
"""ctest `hta` (label cpu): Holistic Trace Analysis (pip package holistictraceanalysis) loads
crossbench's full export and its kernel breakdown equals crossbench's table.

usage: test_hta.py REPO_ROOT BENCH_EXE

For the committed H200 run folder and a replayed one, full.json alone is put in a folder (HTA
reads every *.json of its trace_dir) and loaded with hta.trace_analysis.TraceAnalysis. Checked:
- HTA finds the rank in the file itself (its regex '"rank":\\s+(\\d+)' over the header: the
  distributedInfo block), without its "no rank" warning, and reads one rank, 0;
- get_gpu_kernel_breakdown(include_memory_kernels=True), with nothing folded into "others", lists
  exactly the device rows of table.json (kind kernel, gpu_memcpy, gpu_memset): same names, same
  counts (sum / mean, and the events HTA holds per name), and the same total, min and max time per
  name to the nanosecond;
- HTA links every kernel, memcpy and memset to its launch (correlation) and so to a
  ProfilerStep#N iteration, and finds the same iterations as the trace's ProfilerStep ranges;
- HTA's absolute trace start (baseTimeNanoseconds + first event) lies in the recording window.
HTA rounds microsecond timestamps with a fractional part to whole microseconds by default
(ceil(start), floor(end); pytorch/pytorch#122425), which changes durations, so times are compared
with HTA_DISABLE_NS_ROUNDING=1; names and counts are compared with HTA's default rounding too.

Skipped (exit 77, "SKIPPED: ...") when holistictraceanalysis cannot be imported; scripts/test.sh
installs it (and psutil, which HTA 0.5.0 imports without declaring it) with pip when it can.
"""
import contextlib
import io
import json
import logging
import os
import shutil
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xb_pytest_common as common  # noqa: E402

DEVICE_KINDS = ("kernel", "gpu_memcpy", "gpu_memset")


def import_hta():
    common.require_module("hta", "holistictraceanalysis", "the HTA test")
    common.require_module("psutil", "psutil", "holistictraceanalysis 0.5.0 (it imports psutil)")
    warnings.simplefilter("ignore")
    error = None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            from hta.trace_analysis import TraceAnalysis  # noqa: F401
        except Exception as e:  # an HTA release whose own dependencies are missing
            error = e
    if error is not None:
        common.skip(f"holistictraceanalysis is installed but cannot be imported: {error!r}")
    import hta.common.trace_file as trace_file
    from hta.trace_analysis import TraceAnalysis
    return TraceAnalysis, trace_file


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def load(TraceAnalysis, trace_dir, rounding):
    if rounding:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    else:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        analysis = TraceAnalysis(trace_dir=trace_dir)
        _, kernels = analysis.get_gpu_kernel_breakdown(
            visualize=False, duration_ratio=1.0, num_kernels=1 << 30, include_memory_kernels=True)
    return analysis, kernels


def ns(us):
    return int(round(float(us) * 1000.0))


def our_table(folder):
    table = json.load(open(os.path.join(folder, "table.json")))
    rows = {}
    for r in table["rows"]:
        if r["kind"] in DEVICE_KINDS:
            assert r["name"] not in rows, f"table.json: two device rows named {r['name']!r}"
            rows[r["name"]] = r
    assert rows, f"{folder}/table.json has no device rows"
    return rows


def hta_events_per_name(analysis):
    """Events HTA holds per device-activity name (stream >= 0, not sync), and their iterations."""
    sym = analysis.t.symbol_table.get_sym_table()
    df = analysis.t.get_trace(0)
    device = df[df["stream"].ge(0)]
    counts, iterations = {}, {}
    for name_id, cat_id, iteration in zip(device["name"], device["cat"], device["iteration"]):
        if sym[cat_id] not in DEVICE_KINDS:
            continue
        name = sym[name_id]
        counts[name] = counts.get(name, 0) + 1
        iterations.setdefault(name, set()).add(int(iteration))
    return counts, iterations


def check_folder(TraceAnalysis, trace_file, label, folder, work):
    trace_dir = os.path.join(work, "hta-" + str(abs(hash(folder))))
    os.makedirs(trace_dir)
    shutil.copy(os.path.join(folder, "full.json"), trace_dir)
    trace = os.path.join(trace_dir, "full.json")

    capture = Capture()
    logging.getLogger("hta").addHandler(capture)
    ok, ranks = trace_file.create_rank_to_trace_dict([trace])
    logging.getLogger("hta").removeHandler(capture)
    assert ok and ranks == {0: trace}, f"{label}: HTA's rank map is {ranks}, not {{0: full.json}}"
    missing = [m for m in capture.messages if "does not have the rank" in m]
    assert not missing, f"{label}: HTA did not find the rank in full.json: {missing[0]}"

    rows = our_table(folder)
    analysis, kernels = load(TraceAnalysis, trace_dir, rounding=False)
    assert analysis.t.get_ranks() == [0], f"{label}: HTA read ranks {analysis.t.get_ranks()}"
    assert "others" not in set(kernels["name"]), f"{label}: HTA folded kernels into 'others'"
    hta_rows = {r["name"]: r for _, r in kernels.iterrows()}
    assert set(hta_rows) == set(rows), (
        f"{label}: kernel names differ; only HTA: {sorted(set(hta_rows) - set(rows))}, "
        f"only table.json: {sorted(set(rows) - set(hta_rows))}")
    counts, iterations = hta_events_per_name(analysis)
    for name, ours in rows.items():
        theirs = hta_rows[name]
        where = f"{label}: {name!r}"
        assert int(theirs["rank"]) == 0, f"{where}: rank {theirs['rank']}"
        count = int(round(float(theirs["sum (us)"]) / float(theirs["mean (us)"])))
        assert count == ours["calls"] == counts.get(name), (
            f"{where}: HTA counts {count} (sum/mean) and {counts.get(name)} events, table.json {ours['calls']}")
        for hta_key, our_key in (("sum (us)", "self_cuda_ns"), ("min (us)", "min_ns"), ("max (us)", "max_ns")):
            assert ns(theirs[hta_key]) == ours[our_key], (
                f"{where}: HTA {hta_key} {float(theirs[hta_key]):.3f} us, table.json {our_key} {ours[our_key]} ns")
        assert ours["self_cuda_ns"] == ours["cuda_total_ns"], f"{where}: table.json self != total CUDA"
        kernel_type = theirs["kernel_type"]
        expected_type = "COMPUTATION" if ours["kind"] == "kernel" else "MEMORY"
        assert kernel_type == expected_type, f"{where}: HTA kernel type {kernel_type}, expected {expected_type}"
        assert -1 not in iterations[name], f"{where}: HTA could not link some to their launch's ProfilerStep"

    full = json.load(open(trace))
    steps = {int(e["name"].split("#")[1]) for e in full["traceEvents"]
             if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")}
    found = set(int(i) for i in analysis.t.get_iterations(0))
    assert found == steps, f"{label}: HTA found iterations {sorted(found)}, the trace has {sorted(steps)}"
    # HTA's absolute time of the trace start comes from baseTimeNanoseconds: the first event's start
    # on the recording's clock, inside the recording window.
    first_ns = min(round(e["ts"] * 1000) for e in full["traceEvents"] if e.get("ph") == "X")
    start = analysis.t.get_trace_start_unixtime_ns(0)
    window = full["crossbench"]
    assert abs(start - (full["baseTimeNanoseconds"] + first_ns)) <= 1, (
        f"{label}: HTA puts the trace start at {start} ns, the trace at {full['baseTimeNanoseconds'] + first_ns} ns")
    assert window["window_start_ns"] <= start <= window["window_end_ns"], (
        f"{label}: HTA's trace start {start} ns is outside the recording window")

    # HTA's default (rounding) parse: same names and counts.
    rounded_analysis, rounded = load(TraceAnalysis, trace_dir, rounding=True)
    assert set(rounded["name"]) == set(rows), f"{label}: with HTA's rounding the kernel names differ"
    rounded_counts, _ = hta_events_per_name(rounded_analysis)
    assert rounded_counts == {n: r["calls"] for n, r in rows.items()}, (
        f"{label}: with HTA's rounding the counts differ: {rounded_counts}")
    total = sum(r["calls"] for r in rows.values())
    print(f"ok: {label}: HTA rank 0, {len(rows)} kernel/memcpy/memset names, {total} activities, "
          f"{len(steps)} iterations: names, counts, total/min/max time equal table.json")


def body(tmp):
    repo, bench = common.parse_args("REPO_ROOT BENCH_EXE")
    TraceAnalysis, trace_file = import_hta()
    for label, folder in common.run_folders(repo, bench, tmp):
        check_folder(TraceAnalysis, trace_file, label, folder, tmp)


if __name__ == "__main__":
    common.main(body)
