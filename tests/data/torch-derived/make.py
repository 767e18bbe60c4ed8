#!/usr/bin/env python3
"""Derives the PyTorch profile classes of issue 37 from committed real H200 exports (README.md).

None of these files was recorded: each is a real PyTorch 2.11 export (tests/data/torch-h200,
tests/data/torch-h200-corpus) transformed the way PyTorch 2.11 and its Kineto would have written
that class, by the rule cited at each function. Run from anywhere:

    python3 tests/data/torch-derived/make.py           # rewrites the files of this folder
    python3 tests/data/torch-derived/make.py --check   # exit 1 when a committed file differs

Plain Python (json, gzip), no torch. Times in the trace are kept as written (no event is moved).
"""
import gzip
import io
import json
import os
import re
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
CORPUS = os.path.join(DATA, "torch-h200-corpus")
H200 = os.path.join(DATA, "torch-h200")
# PyTorch's printing of times and shares, as the oracle models it (profiler_util.py _format_time,
# _format_time_share): one implementation for the tables made here and the ones it reads.
sys.path.insert(0, os.path.join(os.path.dirname(DATA), "torch_oracle"))
from table_text import format_share, format_time, parse_time  # noqa: E402

# torch/csrc/profiler/kineto_shim.cpp: the activities only ProfilerActivity.CUDA enables
# (kCudaTypes less the runtime/driver calls that kCpuTypes has too), as the trace names them.
CUDA_ONLY_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "overhead", "cuda_sync"}
COLUMN_WIDTH = 12  # profiler_util.py _build_table DEFAULT_COLUMN_WIDTH
SPACING = 2        # _build_table SPACING_SIZE


# --------------------------------------------------------------------------------------------
# Reading and writing

def load_trace(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"), parse_float=Decimal)


def trace_text(trace):
    """JSON text in Kineto's spirit: one event per line, numbers as read (Decimal kept exact)."""
    class Enc(json.JSONEncoder):
        def default(self, o):
            if isinstance(o, Decimal):
                return float(o)
            return super().default(o)

    def dumps(x):
        return json.dumps(x, ensure_ascii=False, cls=Enc)

    head = {k: v for k, v in trace.items() if k != "traceEvents"}
    out = ["{"]
    for k, v in head.items():
        out.append("  %s: %s," % (dumps(k), dumps(v)))
    out.append('  "traceEvents": [')
    evs = trace["traceEvents"]
    for i, e in enumerate(evs):
        out.append("  " + _exact(e) + ("," if i + 1 < len(evs) else ""))
    out.append("]}")
    return "\n".join(out) + "\n"


def _exact(e):
    # Decimal numbers keep their text ("5080739596150.227"), which float() could change
    parts = []
    for k, v in e.items():
        parts.append("%s: %s" % (json.dumps(k), _value(v)))
    return "{" + ", ".join(parts) + "}"


def _value(v):
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (json.dumps(k), _value(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def parse_table(path):
    """(headers, rows as lists of cells, footer lines) of a table PyTorch printed (ASCII names)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    rule = lines[0]
    spans, i = [], 0
    while i < len(rule):
        if rule[i] == "-":
            j = i
            while j < len(rule) and rule[j] == "-":
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    cut = lambda line: [line[a:b].strip() for a, b in spans]
    headers = re.split(r"\s{2,}", lines[1].strip())  # a header may overflow its column
    rows, k = [], 3
    while not lines[k].startswith("-"):
        rows.append(cut(lines[k]))
        k += 1
    return headers, rows, lines[k + 1:]


def layout(headers, rows, name_width, footer):
    """profiler_util.py _build_table: every column right-aligned to its width (Python's format
    pads by code points) and followed by two spaces; the dashed rule above and below."""
    widths = [name_width] + [COLUMN_WIDTH] * (len(headers) - 1)
    sep = "".join("-" * w + " " * SPACING for w in widths)
    line = lambda cells: "".join(("{:>%d}" % w).format(c) + " " * SPACING for c, w in zip(cells, widths))
    return "\n".join([sep, line(headers), sep] + [line(r) for r in rows] + [sep] + footer) + "\n"


def us(text):
    """'1.234ms' -> 1234.0 (microseconds), as _format_time printed it."""
    return parse_time(text)[0]


def ns(x):
    return int((Decimal(x) * 1000).to_integral_value())


def first_seen(trace):
    """The rows' key_averages order (profiler.py _parse_kineto_results sorts the events by
    (start, -end); profiler_util.py EventList.key_averages keeps first-seen order)."""
    order = {}
    evs = sorted((e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"),
                 key=lambda e: (Decimal(e["ts"]), -Decimal(e.get("dur", 0))))
    for e in evs:
        n = e["name"]
        n = "ProfilerStep*" if n.startswith("ProfilerStep#") else n
        order.setdefault(n, len(order))
    return lambda cut: min((order[n] for n in order if n == cut or (cut.endswith("...") and n.startswith(cut[:-3]))),
                           default=len(order))


def name_width(names):
    """_build_table: max(len(key)) + 4, at most max_name_column_width (55)."""
    return min(max(len(n) for n in names) + 4, 55)


# --------------------------------------------------------------------------------------------
# The classes

def cpu_activities(trace):
    """A profile of the same work with activities=[ProfilerActivity.CPU]: Kineto records the
    kCpuTypes only, so no kernel, memcpy, memset, GPU span, overhead or sync records, and no ac2g
    flow end (Kineto writes it with the device activity); the runtime and driver calls keep their
    flow starts and External ids (EXTERNAL_CORRELATION is a CPU type)."""
    out = dict(trace)
    out["traceEvents"] = [e for e in trace["traceEvents"]
                          if not (e.get("ph") == "X" and e.get("cat") in CUDA_ONLY_CATS)
                          and not (e.get("cat") == "ac2g" and e.get("ph") == "f")]
    return out


def host_rows(headers, rows):
    """The rows that are not device rows (kernels, memcpys, memsets, GPU spans: CPU time 0 and
    device time), as dicts by header."""
    out = []
    for r in rows:
        d = dict(zip(headers, r))
        if us(d["CPU total"]) == 0 and us(d["Self CPU"]) == 0 and us(d["CUDA total"]) > 0:
            continue
        out.append(d)
    return out


def make_cpu_only(src):
    """cpu_only: `prof = torch.profiler.profile(activities=[ProfilerActivity.CPU], ...)` of the
    source's work. The table is what _build_table prints for it: no device time anywhere
    (use_device None), so no device columns and no device footer; the host rows keep their CPU
    columns (the dropped records had none; the source has no overhead event, which would have
    been a child of an op); device rows are gone; sort_by='self_cuda_time_total' ties every row
    at 0, so the rows keep key_averages' first-seen order."""
    trace = cpu_activities(load_trace(src + ".json"))
    headers, rows, footer = parse_table(src + ".txt")
    hosts = host_rows(headers, rows)
    order = first_seen(trace)
    hosts.sort(key=lambda d: order(d["Name"]))
    keep = [h for h in headers if "CUDA" not in h]
    names = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"}
    text = layout(keep, [[d[h] for h in keep] for d in hosts], name_width(names),
                  [f for f in footer if not f.startswith("Self CUDA")])
    return trace, text


def make_legacy(src):
    """legacy: `torch.autograd.profiler.profile(use_device="cuda")` (use_kineto=False) of the
    source's work: ProfilerState.KINETO_GPU_FALLBACK with CPU activities only, so its
    export_chrome_trace (Kineto's save) writes the trace cpu_only has. Its table's device
    columns are per-op cudaEvent times (FunctionEvent.is_legacy), which no file here carries:
    the stand-in for each host row is the source table's own device figures (Self CUDA, CUDA
    total, CUDA time avg), the runtime and driver rows 0 (no cudaEvent around them); Self CUDA %
    and the footer follow _build_table (the total sums the legacy rows' Self CUDA). Sorted by
    Self CUDA (stable)."""
    trace, _ = make_cpu_only(src)
    headers, rows, footer = parse_table(src + ".txt")
    hosts = host_rows(headers, rows)
    order = first_seen(trace)
    hosts.sort(key=lambda d: order(d["Name"]))
    total = sum(us(d["Self CUDA"]) for d in hosts)
    for d in hosts:
        d["Self CUDA %"] = format_share(us(d["Self CUDA"]), total)
    hosts.sort(key=lambda d: -us(d["Self CUDA"]))
    names = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"}
    foot = [f for f in footer if not f.startswith("Self CUDA")] + ["Self CUDA time total: " + format_time(total)]
    return trace, layout(headers, [[d[h] for h in headers] for d in hosts], name_width(names), foot)


NON_ASCII = "前向 add"


def make_non_ascii(src, annotation="add"):
    """non_ascii: the source's record_function named NON_ASCII. PyTorch's table prints the name
    (Python pads by code points); Kineto's JSON export writes every activity name holding a
    character that is not printable ASCII as "unknown" (libkineto output_json.cpp
    ChromeTraceLogger::handleActivity -> sanitizeForNonReadableChars, std::isprint per byte), so
    the user_annotation and its gpu_user_annotation spans are "unknown" in the trace."""
    trace = load_trace(src + ".json")
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "gpu_user_annotation") \
                and e.get("name") == annotation:
            e["name"] = "unknown"
    headers, rows, footer = parse_table(src + ".txt")
    for r in rows:
        if r[0] == annotation:
            r[0] = NON_ASCII
    names = [r[0] for r in rows]
    return trace, layout(headers, rows, name_width(names + [NON_ASCII]), footer)


def make_triton_direct(src, annotation="add", op="aten::add"):
    """triton_direct: the source's kernels launched by a Triton kernel called directly inside
    the record_function (its launcher calls cuLaunchKernel; no aten op runs): the op's cpu_op
    events are gone, the launch is a cuda_driver cuLaunchKernel with neither it nor its kernel
    carrying an External id (PyTorch pushed only the annotation's id, onto CUPTI's CUSTOM1
    stack, which the trace does not write: torch/csrc/profiler/collection.cpp begin_op), and the
    GPU spans stay (Kineto extends the span of the CUSTOM1 annotation: libkineto
    GenericActivityProfiler::handleGpuActivity). The table: the op's row is gone; the
    annotation's Self CPU takes its time (the launch is now the annotation's child: the
    annotation's duration less the launch's, per event, from the trace) and its and the step's
    CUDA total are 0 (an unlinked kernel is no CPU event's kernel: profiler.py
    _parse_kineto_results); the kernel and GPU-span rows keep their figures."""
    trace = load_trace(src + ".json")
    evs = trace["traceEvents"]
    ops = [e for e in evs if e.get("ph") == "X" and e.get("name") == op]
    op_ids = {e["args"]["External id"] for e in ops}
    out = []
    for e in evs:
        if e in ops:
            continue
        args = e.get("args") or {}
        if e.get("ph") == "X" and args.get("External id") in op_ids and e.get("cat") in ("cuda_runtime", "kernel"):
            args = {k: v for k, v in args.items() if k != "External id"}
            e = dict(e, args=args)
            if e["cat"] == "cuda_runtime":
                e["cat"], e["name"] = "cuda_driver", "cuLaunchKernel"
                e["args"] = dict(args, cbid=307)   # CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel
        out.append(e)
    trace["traceEvents"] = out
    annots = [e for e in out if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"] == annotation]
    launches = [e for e in out if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
    self_ns = 0
    for a in annots:
        a0, a1 = ns(a["ts"]), ns(a["ts"]) + ns(a["dur"])
        inside = sum(ns(c["dur"]) for c in launches if a0 <= ns(c["ts"]) and ns(c["ts"]) + ns(c["dur"]) <= a1)
        self_ns += ns(a["dur"]) - inside
    headers, rows, footer = parse_table(src + ".txt")
    total_cpu = us(footer[0].split(": ")[1])
    table = []
    for r in rows:
        d = dict(zip(headers, r))
        if d["Name"] == op:
            continue
        host = us(d["CPU total"]) > 0
        if host and d["Name"] == annotation:
            d["Self CPU"] = format_time(self_ns / 1000.0)
            d["Self CPU %"] = format_share(self_ns / 1000.0, total_cpu)
        if host and d["Name"] in (annotation, "ProfilerStep*"):
            d["CUDA total"] = d["CUDA time avg"] = format_time(0.0)
        if d["Name"] == "cudaLaunchKernel":
            d["Name"] = "cuLaunchKernel"
        table.append(d)
    table.sort(key=lambda d: -us(d["CUDA total"]))  # sort_by='cuda_time_total', stable
    names = [e["name"] for e in out if e.get("ph") == "X" and e.get("cat") != "Trace"]
    return trace, layout(headers, [[d[h] for h in headers] for d in table], name_width(names), footer)


def make_cuda_only(src):
    """cuda_only: `torch.profiler.profile(activities=[ProfilerActivity.CUDA])` of the source's
    work: Kineto records kCudaTypes only (kernels, memcpys, memsets, runtime and driver calls,
    overhead), and PyTorch registers no op callbacks without ProfilerActivity.CPU
    (torch/csrc/autograd/profiler_kineto.cpp enableProfiler), so no cpu_op or user_annotation
    event, no External id (no CUSTOM0 id pushed) and no GPU span (no CUSTOM1 id). The table:
    the runtime/driver and device rows as printed (none of them had a range child), Self CPU %
    and CPU total % over the new Self CPU total (the runtime rows' sum), in first-seen order
    after the sort by Self CUDA."""
    trace = load_trace(src + ".json")
    out = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "gpu_user_annotation",
                                                   "python_function"):
            continue
        args = e.get("args")
        if isinstance(args, dict) and "External id" in args:
            e = dict(e, args={k: v for k, v in args.items() if k != "External id"})
        out.append(e)
    trace["traceEvents"] = out
    kept = {e["name"] for e in out if e.get("ph") == "X" and e.get("cat") != "Trace"}
    headers, rows, footer = parse_table(src + ".txt")
    table = [dict(zip(headers, r)) for r in rows]
    shown = lambda cut: any(n == cut or (cut.endswith("...") and n.startswith(cut[:-3])) for n in kept)
    table = [d for d in table if shown(d["Name"])]   # the GPU-span rows' names are gone too
    total = sum(us(d["Self CPU"]) for d in table)
    for d in table:
        d["Self CPU %"] = format_share(us(d["Self CPU"]), total)
        d["CPU total %"] = format_share(us(d["CPU total"]), total)
    order = first_seen(trace)
    table.sort(key=lambda d: order(d["Name"]))
    table.sort(key=lambda d: -us(d["Self CUDA"]))
    foot = ["Self CPU time total: " + format_time(total)] + [f for f in footer if f.startswith("Self CUDA")]
    return trace, layout(headers, [[d[h] for h in headers] for d in table], name_width(kept), foot)


OUTPUTS = {
    "cpu_only": lambda: make_cpu_only(os.path.join(CORPUS, "transformer_train_adamw")),
    "legacy": lambda: make_legacy(os.path.join(CORPUS, "transformer_train_adamw")),
    "non_ascii": lambda: make_non_ascii(os.path.join(H200, "64_bf16_add")),
    "triton_direct": lambda: make_triton_direct(os.path.join(H200, "64_bf16_add")),
    "cuda_only": lambda: make_cuda_only(os.path.join(H200, "64_bf16_addmm")),
}


def files():
    """{file name: bytes} of every derived file."""
    out = {}
    for name, make in OUTPUTS.items():
        trace, table = make()
        text = trace_text(trace).encode("utf-8")
        if len(text) > 200000:   # gzip the large ones, deterministically (no name, no time)
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb", filename="", mtime=0) as g:
                g.write(text)
            out[name + ".json.gz"] = buf.getvalue()
        else:
            out[name + ".json"] = text
        out[name + ".txt"] = table.encode("utf-8")
    return out


def main(argv):
    check = "--check" in argv
    bad = 0
    for fname, data in sorted(files().items()):
        path = os.path.join(HERE, fname)
        if check:
            try:
                with open(path, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                print("%s: differs from what make.py derives" % fname)
                bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
            print("wrote %s (%d bytes)" % (fname, len(data)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
