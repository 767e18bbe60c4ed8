#!/usr/bin/env python3
"""ctest `trace_format` (label cpu): every event of both Chrome trace exports (trace_only.json and
full.json) of the committed H200 run folder and of a replayed one uses only the Trace Event
Format's documented fields, as chrome://tracing (catapult) and Perfetto read them.

usage: test_trace_format.py REPO_ROOT BENCH_EXE

The format ("Trace Event Format", Google doc 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
- JSON Object Format: {"traceEvents": [...], "displayTimeUnit": "ms"|"ns", ...}; other top-level
  keys are trace metadata. We allow the format's own keys, the ones PyTorch/Kineto writes, and
  crossbench's documented ones (docs/formats.md), nothing else.
- each event: "ph" (one of the documented phases), "name", "cat", "pid", "tid", "ts" (microseconds),
  "args"; per phase: X needs "dur"; i/I a scope "s" in g/p/t; M names one of process_name,
  process_labels, process_sort_index, thread_name, thread_sort_index with its argument in args;
  flow events s/t/f need "id", "cat" and "name", and crossbench's "f" binds to its enclosing slice
  ("bp": "e"); C counters carry numeric args.
Checked on the raw text as well: "ts" and "dur" are microseconds written with exactly three
decimals (docs/formats.md), pid/tid are integers in [0, 2^32) (Perfetto reads them as uint32), no
event has an array at its top level (Perfetto's tokenizer cannot skip one when looking for ts),
metadata events name every process and thread lane (GPU lanes "GPU <device>" / "stream <id>"),
and every flow pair has exactly one start and one end, each bound to a slice of its lane.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xb_pytest_common as common  # noqa: E402

# Every phase the format documents (Duration, Complete, Instant (i; I is the deprecated form),
# Counter, Async (b/n/e nestable, S/T/p/F legacy), Flow (s/t/f), Sample, Object (N/O/D),
# Metadata, Memory dump (V/v), Mark, Clock sync, Context ( ), Linked id).
DOCUMENTED_PHASES = set("BEXiICbneSTpFstfPNODMVvRc()=")
# Event fields the format documents.
EVENT_KEYS = {"name", "cat", "ph", "ts", "tts", "pid", "tid", "dur", "tdur", "args", "id", "id2",
              "scope", "s", "bp", "cname", "sf", "stack", "esf", "estack", "bind_id", "flow_in",
              "flow_out", "use_async_tts"}
METADATA_ARG = {"process_name": ("name", str), "process_labels": ("labels", str),
                "process_sort_index": ("sort_index", int), "thread_name": ("name", str),
                "thread_sort_index": ("sort_index", int)}
# Top-level keys: the format's, PyTorch/Kineto's, crossbench's (docs/formats.md).
FORMAT_TOP = {"traceEvents", "displayTimeUnit", "systemTraceEvents", "otherData", "stackFrames",
              "samples", "controllerTraceDataKey", "powerTraceAsString", "metadata"}
KINETO_TOP = {"schemaVersion", "deviceProperties", "distributedInfo", "cuda_driver_version",
              "cuda_runtime_version", "cupti_version", "hip_runtime_version", "baseTimeNanoseconds",
              "traceName", "trace_id", "record_shapes", "profile_memory", "with_stack",
              "with_flops", "with_modules"}
CROSSBENCH_TOP = {"crossbench", "gpu", "externalCorrelations"}
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync"}
HOST_CATS = {"cuda_runtime", "cuda_driver", "user_annotation", "cpu_op"}
US_TEXT = re.compile(r"^[0-9]+\.[0-9]{3}$")


class Num(float):
    """A JSON number that remembers its text."""

    def __new__(cls, text):
        n = float.__new__(cls, text)
        n.text = text
        return n


class Int(int):
    def __new__(cls, text):
        n = int.__new__(cls, text)
        n.text = text
        return n


def ns_of(value):
    """Integer nanoseconds of a microsecond value written with three decimals."""
    return int(value.text.replace(".", ""))


def check_us(where, key, value):
    text = getattr(value, "text", repr(value))
    assert isinstance(value, Num) and US_TEXT.match(text), (
        f"{where}: \"{key}\" is {text}; the format wants microseconds and crossbench writes them "
        f"with exactly three decimals (docs/formats.md)")


def check_lane_id(where, key, value):
    assert isinstance(value, int) and not isinstance(value, bool), (
        f"{where}: \"{key}\" is {value!r}, not an integer")
    assert 0 <= value < 2**32, f"{where}: \"{key}\" {value} is outside [0, 2^32) (Perfetto: uint32)"


def check_trace(path):
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    doc = json.loads(text, parse_float=Num, parse_int=Int)
    name = path
    assert isinstance(doc, dict), f"{name}: not the JSON Object Format"
    unknown = set(doc) - FORMAT_TOP - KINETO_TOP - CROSSBENCH_TOP
    assert not unknown, (f"{name}: top-level keys {sorted(unknown)} are neither the format's, "
                         f"Kineto's nor documented crossbench keys")
    assert isinstance(doc.get("traceEvents"), list), f"{name}: no traceEvents array"
    assert doc.get("displayTimeUnit") in ("ms", "ns"), f"{name}: displayTimeUnit must be ms or ns"
    assert isinstance(doc.get("schemaVersion"), int), f"{name}: schemaVersion (Kineto) missing"
    assert isinstance(doc.get("baseTimeNanoseconds"), int), f"{name}: baseTimeNanoseconds missing"

    process_names, process_labels, thread_names = {}, {}, {}
    lanes = {}  # (pid, tid) -> set of categories of the events on it
    slices = {}  # (pid, tid) -> [(start_ns, end_ns)] of X events
    flows = {}  # id -> {"s": [...], "f": [...]}
    counts = {}
    for i, e in enumerate(doc["traceEvents"]):
        where = f"{name}: traceEvents[{i}]"
        assert isinstance(e, dict), f"{where}: not an object"
        ph = e.get("ph")
        assert isinstance(ph, str) and ph in DOCUMENTED_PHASES, f"{where}: ph {ph!r} is not a documented phase"
        counts[ph] = counts.get(ph, 0) + 1
        extra = set(e) - EVENT_KEYS
        assert not extra, f"{where}: fields {sorted(extra)} are not in the Trace Event Format"
        arrays = [k for k, v in e.items() if isinstance(v, list)]
        assert not arrays, f"{where}: {arrays} are arrays at the event's top level (Perfetto fails on them)"
        assert isinstance(e.get("name"), str) and e["name"] != "", f"{where}: no name"
        for key in ("pid", "tid"):
            assert key in e, f"{where}: no \"{key}\""
            check_lane_id(where, key, e[key])
        if "args" in e:
            assert isinstance(e["args"], dict), f"{where}: args is not an object"
        if ph != "M" or "ts" in e:
            assert "ts" in e, f"{where}: no ts"
            check_us(where, "ts", e["ts"])
        lane = (int(e["pid"]), int(e["tid"]))

        if ph == "X":
            assert "dur" in e, f"{where}: a complete event (X) needs dur"
            check_us(where, "dur", e["dur"])
            assert isinstance(e.get("cat"), str) and e["cat"], f"{where}: no cat"
            start = ns_of(e["ts"])
            slices.setdefault(lane, []).append((start, start + ns_of(e["dur"])))
            lanes.setdefault(lane, set()).add(e["cat"])
        elif ph in ("i", "I"):
            assert e.get("s") in ("g", "p", "t"), f"{where}: an instant event needs scope s = g, p or t"
        elif ph == "M":
            assert e["name"] in METADATA_ARG, f"{where}: metadata event {e['name']!r} is not documented"
            arg, kind = METADATA_ARG[e["name"]]
            value = e.get("args", {}).get(arg)
            assert isinstance(value, kind) and not isinstance(value, bool), (
                f"{where}: {e['name']} needs args.{arg} ({kind.__name__})")
            if e["name"] == "process_name":
                process_names[lane[0]] = value
            elif e["name"] == "process_labels":
                process_labels[lane[0]] = value
            elif e["name"] == "thread_name":
                thread_names[lane] = value
        elif ph in ("s", "t", "f"):
            assert "id" in e and isinstance(e["id"], (int, str)), f"{where}: a flow event needs an id"
            assert isinstance(e.get("cat"), str) and e["cat"], f"{where}: a flow event needs cat"
            if ph == "f":
                assert e.get("bp") == "e", f"{where}: crossbench's flow end binds to its enclosing slice (bp e)"
            else:
                assert "bp" not in e or e["bp"] == "e", f"{where}: bp {e['bp']!r} (only \"e\" is documented)"
            flows.setdefault((e["cat"], e["name"], e["id"]), {"s": [], "t": [], "f": []})[ph].append(
                (lane, ns_of(e["ts"]), where))
        elif ph == "C":
            args = e.get("args")
            assert isinstance(args, dict) and args and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in args.values()), (
                f"{where}: a counter needs numeric args")
        elif ph in ("B", "E"):
            pass  # ts, pid, tid checked above
        else:
            raise AssertionError(f"{where}: crossbench writes no {ph!r} events; extend this test first")
        if ph != "M":
            lanes.setdefault(lane, set())

    # Metadata names every lane; GPU lanes as "GPU <device>" / "stream <stream>".
    for (pid, tid), cats in sorted(lanes.items()):
        where = f"{name}: lane pid {pid} tid {tid} ({', '.join(sorted(cats)) or 'flows only'})"
        assert pid in process_names, f"{where}: no process_name metadata event"
        assert (pid, tid) in thread_names, f"{where}: no thread_name metadata event"
        if cats & DEVICE_CATS:
            assert not cats & HOST_CATS, f"{where}: host and device events share a lane"
            assert process_names[pid] == f"GPU {pid}", f"{where}: process named {process_names[pid]!r}, not 'GPU {pid}'"
            assert thread_names[(pid, tid)] == f"stream {tid}", (
                f"{where}: thread named {thread_names[(pid, tid)]!r}, not 'stream {tid}'")
        elif cats & HOST_CATS:
            assert process_labels.get(pid) == "CPU", f"{where}: host process not labelled CPU"
            assert str(tid) in thread_names[(pid, tid)], (
                f"{where}: host thread named {thread_names[(pid, tid)]!r} does not name its id")
    for pid in process_names:
        assert any(p == pid for p, _ in lanes), f"{name}: process_name for pid {pid} without events"

    # Flows: one start and one end per id, each inside a slice of its own lane.
    def enclosed(lane, ts):
        return any(start <= ts <= end for start, end in slices.get(lane, ()))

    for (cat, fname, fid), ends in flows.items():
        where = f"{name}: flow {cat}/{fname} id {fid}"
        assert len(ends["s"]) == 1 and len(ends["f"]) == 1, (
            f"{where}: {len(ends['s'])} starts and {len(ends['f'])} ends (one of each expected)")
        (s_lane, s_ts, s_where), (f_lane, f_ts, f_where) = ends["s"][0], ends["f"][0]
        assert s_ts <= f_ts, f"{where}: ends ({f_ts} ns) before it starts ({s_ts} ns)"
        assert enclosed(s_lane, s_ts), f"{s_where}: flow start outside every slice of its lane"
        assert enclosed(f_lane, f_ts), f"{f_where}: flow end (bp e) outside every slice of its lane"
    return counts, len(lanes), sum(1 for v in flows.values())


def body(tmp):
    repo, bench = common.parse_args("REPO_ROOT BENCH_EXE")
    for label, folder in common.run_folders(repo, bench, tmp):
        for trace in ("trace_only.json", "full.json"):
            counts, lanes, flows = check_trace(os.path.join(folder, trace))
            phases = ", ".join(f"{n} {ph}" for ph, n in sorted(counts.items()))
            print(f"ok: {label}: {trace}: {phases}; {lanes} lanes named; {flows} flow pairs")
        full = json.load(open(os.path.join(folder, "full.json")))
        assert any(e.get("ph") == "s" for e in full["traceEvents"]), f"{label}/full.json: no ac2g flows"


if __name__ == "__main__":
    common.main(body)
