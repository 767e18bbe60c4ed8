#!/usr/bin/env python3
"""An independent re-derivation of PyTorch's ``prof.key_averages().table()`` from the
Chrome trace that ``prof.export_chrome_trace()`` wrote, in plain Python (json and gzip only).

It is the oracle that crossbench's validator expectations are tested against: it does not
share any code with validate/ (C++), and it follows PyTorch's own post-processing rules, each
cited below by file and function (PyTorch 2.11; read, not copied):

  P1  torch/autograd/profiler.py        profile._parse_kineto_results
  P2  torch/autograd/profiler_util.py   EventList._populate_cpu_children
  P3  torch/autograd/profiler_util.py   EventList._remove_dup_nodes
  P4  torch/autograd/profiler_util.py   FunctionEvent.{self_,}cpu_time_total, {self_,}device_time_total
  P5  torch/autograd/profiler_util.py   EventList.key_averages (get_key), FunctionEventAvg.add
  P6  torch/autograd/profiler_util.py   _build_table, _format_time, _format_time_share, _format_memory
  P7  torch/autograd/profiler_util.py   _filter_name, _rewrite_name
  K1  torch/csrc/profiler/kineto_shim.cpp  deviceTypeFromActivity (which activities are CUDA);
      kCpuTypes / kCudaTypes (which activities a profile without ProfilerActivity.CUDA records)
  K2  libkineto output_json.cpp  ChromeTraceLogger::handleActivity -> sanitizeForNonReadableChars
      (a name with a byte std::isprint rejects is written "unknown")
  C1  torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp  the "nccl:<collective>" RecordFunction of
      a collective ends when its work ends, not on the thread that started it (async)

Table options (sort keys, row_limit, top_level_events_only, name/shape widths, grouping) and
the comparison with a printed table live in table_compare.py; the table text in table_text.py.

Usage:
  python3 tests/torch_oracle/key_averages.py TRACE.json[.gz] [TABLE.txt ["CALL"]]
prints the oracle's table (and, with a table, every disagreement, one a line; exit 1 if any).
  python3 tests/torch_oracle/key_averages.py --expectations tests/data
prints expected_findings.json: per committed export, the rows where PyTorch's rules make the
table contradict its trace, with the cause (what the validator must report, and only that).
"""

import gzip
import json
import sys
from decimal import Decimal

from table_text import display_name, format_time, shapes_text  # noqa: F401 (re-exported)

# --------------------------------------------------------------------------------------------
# Reading the trace
# --------------------------------------------------------------------------------------------

# K1: activities whose device type is CUDA. Everything else (cpu_op, user_annotation,
# cuda_runtime, cuda_driver, python_function, overhead (the switch's default branch) ...) is CPU.
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation",
               "cuda_profiler_range",
               # PyTorch < 2.0 spellings
               "Kernel", "Memcpy", "Memset"}
# Categories of the trace that are not KinetoEvents of result.events(): the trace's own span,
# Kineto's bookkeeping instants, flows (ph s/f) and metadata (ph M) are skipped by ph below.
SKIP_CATS = {"Trace"}
# python_function events (with_stack=True) are written by the Python tracer into the trace but
# PyTorch 2.x keeps them out of the FunctionEvents that key_averages sees (they have no row in
# any table we recorded); they are skipped unless include_python=True.
PYTHON_CATS = {"python_function"}

MEMORY_EVENT_NAME = "[memory]"
OOM_EVENT_NAME = "[OutOfMemory]"

# P7 _filter_name: utility ops that never become FunctionEvents.
FILTERED_NAMES = {
    MEMORY_EVENT_NAME, OOM_EVENT_NAME,
    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf", "aten::output_nr", "aten::_version",
}

# Observed on every gpu_user_annotation of the committed H200 exports (18 of 18): Kineto writes
# the span one nanosecond wider at each end than the first device activity's start and the last
# one's end, while the FunctionEvent that key_averages sums keeps the unwidened span.
ANNOTATION_EXPORT_WIDENING_NS = 2

CPU, CUDA = "CPU", "CUDA"


def _load_json(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        # Decimal keeps "5080739596306.824" exact: times become integer nanoseconds.
        return json.load(f, parse_float=Decimal)


def _ns(us):
    """Microseconds (Decimal, int or float as written) -> integer nanoseconds."""
    return int((Decimal(us) * 1000).to_integral_value())


def _as_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


class Ev:
    """One FunctionEvent as _parse_kineto_results (P1) would build it from one trace event."""
    __slots__ = ("name", "trace_name", "cat", "device", "is_user_annotation", "id", "linked",
                 "thread", "start", "end", "kernels", "children", "parent", "is_async",
                 "cpu_mem", "cuda_mem", "index", "shapes", "flops")

    def __init__(self):
        self.kernels = []        # device durations (ns) appended by correlation (P1)
        self.children = []
        self.parent = None
        self.is_async = False
        self.cpu_mem = 0
        self.cuda_mem = 0
        self.shapes = []         # KinetoEvent.shapes(): one list of sizes per input
        self.flops = None        # KinetoEvent.flops() where the trace carries it

    # P4 FunctionEvent.cpu_time_total: the interval for CPU events, 0 for device events.
    @property
    def cpu_total(self):
        return self.end - self.start if self.device == CPU else 0

    # P4 self_cpu_time_total: total minus the totals of the direct children; 0 if async/device.
    @property
    def self_cpu(self):
        if self.is_async or self.device != CPU:
            return 0
        return self.cpu_total - sum(c.cpu_total for c in self.children)

    # P4 device_time_total: own kernels plus the children's device totals (CPU events, not
    # legacy); a device event's own interval.
    def device_total(self, memo):
        r = memo.get(self.index)
        if r is not None:
            return r
        if self.is_async:
            r = 0
        elif self.device == CPU:
            r = sum(self.kernels) + sum(c.device_total(memo) for c in self.children)
        else:
            r = self.end - self.start
        memo[self.index] = r
        return r

    # P4 self_device_time_total: total minus the children's totals (which leaves the own kernels)
    def self_device(self, memo):
        if self.is_async:
            return 0
        if self.device == CPU:
            return self.device_total(memo) - sum(c.device_total(memo) for c in self.children)
        return self.device_total(memo)

    def self_cpu_mem(self):
        if self.is_async or self.device != CPU:
            return 0
        return self.cpu_mem - sum(c.cpu_mem for c in self.children)

    def self_cuda_mem(self):
        if self.is_async or self.device != CPU:
            return 0
        return self.cuda_mem - sum(c.cuda_mem for c in self.children)


def input_shapes(args):
    """KinetoEvent.shapes() of an op from its trace args: "Input Dims" holds one entry per
    input, a list of sizes for a tensor, [] for a non-tensor, and for a TensorList the list of
    its tensors' sizes; shapes() has [] for a TensorList (its entries are not sizes). Seen on
    every TensorList op of tests/data/torch-matrix (aten::_foreach_add_, aten::cat, amp's
    _amp_foreach_non_finite_check_and_unscale_: the Input Shapes cell prints [] for them).
    Events without "Input Dims" (kernels, API calls, record_shapes off) have []."""
    dims = args.get("Input Dims")
    if not isinstance(dims, list):
        return []
    out = []
    for d in dims:
        if isinstance(d, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in d):
            out.append([int(x) for x in d])
        else:
            out.append([])
    return out


# C1: the process-group backends whose "<backend>:<collective>" record function ends on the
# thread that completes the work (c10d's Work objects: ProcessGroupNCCL, ProcessGroupGloo, UCC, MPI).
ASYNC_COLLECTIVE_PREFIXES = ("nccl:", "gloo:", "ucc:", "mpi:")


def is_async_event(cat, name):
    """C1: a process group's "<backend>:<collective>" record function (a user_annotation) ends on
    the thread that completes the work, so PyTorch's FunctionEvent is async (start thread !=
    end thread, P1): no parent, no children, Self CPU 0, CUDA 0, CPU total % printed as a
    literal 0 (P6). The trace does not carry the end thread; the name is the rule (every
    nccl:* row of tests/data/torch-matrix/corpus/collectives.* and every gloo:* row of the
    holdout's prints so)."""
    return cat == "user_annotation" and name.startswith(ASYNC_COLLECTIVE_PREFIXES)


def rewrite_name(name):
    """P7 _rewrite_name(with_wildcard=True): ProfilerStep#N -> ProfilerStep*. (Demangling
    through torch._C._demangle is not modelled: Kineto already writes demangled names.)"""
    if name.startswith("ProfilerStep#"):
        return "ProfilerStep*"
    return name


OVERHEAD_CAT = "overhead"
HOST_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}


def _main_thread(evs):
    """The process's main thread (tid == pid) among the host events; else the thread of the
    earliest host event."""
    first = None
    for ev in evs:
        if ev.cat in HOST_CATS:
            pid, tid = ev.thread
            if pid == tid:
                return ev.thread
            if first is None or ev.start < first.start:
                first = ev
    return first.thread if first is not None else None


def _place_overhead_events(evs):
    """Kineto's `overhead` activities (Activity Buffer Request, Lazy Function Loading, Runtime
    Triggered Module Loading, Buffer Flush) are written to the trace on pid -1 / tid 0 with no
    args, but the KinetoEvents PyTorch builds from them carry the profiling thread that was
    running and, as correlation_id(), the External id of the op that was open on that thread
    (CUPTI's external-correlation stack; linked_correlation_id() is 0). So in P1 they are
    frontend events of that thread, nested by time under the op or API call around them (P2),
    and they collect that op's kernels a second time (P1's device_corr_map lookup by id).

    Reproduced on all 14 overhead events of tests/data/torch-h200-corpus (Self CPU of the ops
    around them, the rows' Self CUDA, the Self CPU total). The thread and the id are taken from
    the innermost host event of the main thread (op, annotation or API call) whose interval
    holds the overhead event's start; an overhead event inside no host event keeps its own thread and id 0 (no
    kernels). An overhead event that already has an External id keeps it.

    Only the main thread (the process's, tid == pid, where the profiler runs) counts: the
    overhead event linear_fwd_bwd records while the autograd thread is inside aten::copy_ (and
    the main thread in no op) is a top-level row without kernels in PyTorch's table, and
    aten::copy_'s Self CPU keeps its time.""" 
    over = [ev for ev in evs if ev.cat == OVERHEAD_CAT]
    if not over:
        return
    main = _main_thread(evs)
    hosts = [ev for ev in evs if ev.cat in HOST_CATS and ev.thread == main]
    for ov in over:
        best = None
        for h in hosts:
            if h.start <= ov.start < h.end or (h.start == ov.start == h.end):
                if best is None or (h.start, -h.end) > (best.start, -best.end):
                    best = h
        if best is None:
            continue
        ov.thread = best.thread
        if ov.id == 0:
            # an API call's External id is its op's id (args "External id"); an op's own id
            ov.id = best.linked if best.linked > 0 else best.id
            if best.cat in ("cuda_runtime", "cuda_driver") and best.linked == 0:
                ov.id = 0   # an unlinked API call has no op around it for CUPTI


def build_events(trace, include_python=False, nest_unlinked_api=True, overhead_kernels=True):
    """The FunctionEvents of one trace, with kernels attached and the CPU tree built.

    nest_unlinked_api: an API call (cuda_runtime/cuda_driver) without an "External id" is in
    PyTorch's result with Kineto's system thread id, like the ops of the exported trace; it is
    nested by time under the op around it (P2 groups by thread only).
    """
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    evs = []
    mem = []  # (ts_ns, cpu_bytes, cuda_bytes)
    for e in events:
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        cat = e.get("cat")
        name = e.get("name", "")
        args = e.get("args") or {}
        if ph == "i" and name == MEMORY_EVENT_NAME:
            # profile_memory: [memory] instants, args Device Type (c10::DeviceType as int:
            # 0 CPU, 1 CUDA, ...) and Bytes.
            dt = _as_int(args.get("Device Type", 0))
            nbytes = _as_int(args.get("Bytes", 0))
            mem.append((_ns(e["ts"]), nbytes if dt in (0, 7, 8) else 0,    # CPU, MKLDNN, IDEEP
                        nbytes if dt in (1, 12, 20, 21) else 0))          # CUDA, XPU, PrivateUse1, HIP?
            continue
        if ph != "X" or cat in SKIP_CATS:
            continue
        if cat in PYTHON_CATS and not include_python:
            continue
        if name in FILTERED_NAMES:            # P7 _filter_name
            continue
        ev = Ev()
        ev.index = len(evs)
        ev.cat = cat
        ev.trace_name = name
        ev.name = rewrite_name(name)
        ev.device = CUDA if cat in DEVICE_CATS else CPU
        ev.is_user_annotation = cat in ("user_annotation", "gpu_user_annotation")
        ext = _as_int(args.get("External id", 0))
        corr = args.get("correlation")
        # KinetoEvent.correlation_id(): the op's own id for PyTorch's ops (written as
        # "External id"), CUPTI's correlation id for activities (written as "correlation");
        # linked_correlation_id(): the External id of an activity's op, 0 for ops.
        if corr is not None:
            ev.id = _as_int(corr)
            ev.linked = ext
        else:
            ev.id = ext
            ev.linked = 0
        ev.start = _ns(e["ts"])
        dur = _ns(e.get("dur", 0))
        if cat == "gpu_user_annotation":
            dur = max(0, dur - ANNOTATION_EXPORT_WIDENING_NS)
            ev.start += ANNOTATION_EXPORT_WIDENING_NS // 2
        ev.end = ev.start + dur
        ev.thread = (e.get("pid"), e.get("tid"))
        ev.shapes = input_shapes(args)
        if "flops" in args:
            ev.flops = _as_int(args["flops"])
        ev.is_async = is_async_event(cat, name)
        evs.append(ev)

    # API calls (cuda_runtime, cuda_driver) of threads other than the main one: PyTorch nests them
    # on the main thread's timeline, not their own (an API call linked to an op takes the op's
    # thread in P1 below). The trace writes their CUPTI thread; PyTorch's FunctionEvent.thread
    # (KinetoEvent start_thread_id) for them is the profiling thread's. Observed on every export
    # of tests/data/torch-matrix (families threads and dataloader: 0 rows off with the rule,
    # 3 to 30 rows per table without it).
    main = _main_thread(evs)
    if main is not None:
        for ev in evs:
            if ev.cat in ("cuda_runtime", "cuda_driver") and ev.thread != main:
                ev.thread = main
    _place_overhead_events(evs)
    if not overhead_kernels:
        for ev in evs:
            if ev.cat == OVERHEAD_CAT:
                ev.id = 0

    # P1: every event with linked id 0 is a "frontend" event; a CPU frontend event collects as
    # kernels the device events whose linked id is its id, and gives its thread to the CPU
    # events (API calls) linked to it.
    by_linked = {}
    frontend = []
    for ev in evs:
        if ev.linked > 0:
            by_linked.setdefault(ev.linked, []).append(ev)
        else:
            frontend.append(ev)
    for fe in frontend:
        if fe.device != CPU or fe.is_async:
            continue
        for f in by_linked.get(fe.id, ()):
            if f.device == CUDA:
                fe.kernels.append(f.end - f.start)
            else:
                f.thread = fe.thread

    if not nest_unlinked_api:
        for ev in evs:
            if ev.cat in ("cuda_runtime", "cuda_driver") and ev.linked == 0:
                ev.thread = ("unlinked",) + tuple(ev.thread)

    # P1 memory: a [memory] record inside [start, end] of any CPU event counts in that event's
    # memory (every event containing it, any thread); the others become zero-length
    # "[memory]" FunctionEvents of their own.
    mem.sort()
    if mem:
        import bisect
        ts = [m[0] for m in mem]
        used = [False] * len(mem)
        for ev in evs:
            if ev.device != CPU:
                continue
            lo = bisect.bisect_left(ts, ev.start)
            hi = bisect.bisect_right(ts, ev.end)
            for i in range(lo, hi):
                ev.cpu_mem += mem[i][1]
                ev.cuda_mem += mem[i][2]
                used[i] = True
        for i, m in enumerate(mem):
            if not used[i]:
                ev = Ev()
                ev.index = len(evs)
                ev.cat = "memory"
                ev.name = ev.trace_name = MEMORY_EVENT_NAME
                ev.device = CPU
                ev.is_user_annotation = False
                ev.id = ev.linked = 0
                ev.start = ev.end = m[0]
                ev.thread = ("memory",)
                ev.cpu_mem, ev.cuda_mem = m[1], m[2]
                evs.append(ev)

    # P1: sorted by (start, -end) before the tree is built.
    evs.sort(key=lambda ev: (ev.start, -ev.end))

    # P2 _populate_cpu_children: per thread, CPU non-async events by (start, -end); a stack of
    # open parents; an event is a child of the top of the stack if it starts before the top's
    # end and does not end after it (partial overlaps are not nested).
    by_thread = {}
    for ev in evs:
        if ev.device == CPU and not ev.is_async:
            by_thread.setdefault(ev.thread, []).append(ev)
    for tevs in by_thread.values():
        stack = []
        for ev in tevs:
            while stack:
                p = stack[-1]
                if ev.start >= p.end or ev.end > p.end:
                    stack.pop()
                else:
                    p.children.append(ev)
                    ev.parent = p
                    break
            stack.append(ev)

    # P3 _remove_dup_nodes: an event whose parent has its name and no other child is removed;
    # the parent takes its children and its kernels (the parent's own kernels are replaced).
    while True:
        doomed = set()
        for ev in evs:
            p = ev.parent
            if p is not None and p.name == ev.name and len(p.children) == 1:
                p.children = ev.children
                p.kernels = ev.kernels
                for c in ev.children:
                    c.parent = p
                doomed.add(ev.index)
        if not doomed:
            break
        evs = [ev for ev in evs if ev.index not in doomed]
    return evs


class Row:
    """One key_averages row (FunctionEventAvg, P5)."""
    __slots__ = ("name", "device", "is_user_annotation", "count", "cpu_total", "self_cpu",
                 "cuda_total", "self_cuda", "cpu_mem", "self_cpu_mem", "cuda_mem",
                 "self_cuda_mem", "order", "shapes", "top_level", "is_async", "flops")

    @property
    def kind(self):
        if self.device == CUDA:
            return "gpu_annotation" if self.is_user_annotation else "device"
        return "host"

    @property
    def cpu_avg(self):
        return self.cpu_total / self.count if self.count else 0.0

    @property
    def cuda_avg(self):
        return self.cuda_total / self.count if self.count else 0.0


def key_averages(evs, group_by_input_shapes=False):
    """P5: group by (name, node_id, device_type, is_legacy, is_user_annotation) and, with
    group_by_input_shapes, str(input shapes); node_id is -1 and is_legacy False for every event
    of a Kineto trace, so the key is (name, device, is_user_annotation[, shapes]). Rows keep
    first-seen order (a dict). FunctionEventAvg.add takes cpu_parent, is_async and
    input_shapes from the FIRST event added (events in P1's (start, -end) order): a row is
    top-level (top_level_events_only) when that event has no CPU parent. flops sum the
    events' flops (None where the trace carries none)."""
    rows = {}
    memo = {}
    for ev in evs:
        k = (ev.name, ev.device, ev.is_user_annotation)
        if group_by_input_shapes:
            k += (shapes_text(ev.shapes),)
        r = rows.get(k)
        if r is None:
            r = Row()
            r.name, r.device, r.is_user_annotation = k[:3]
            r.count = r.cpu_total = r.self_cpu = r.cuda_total = r.self_cuda = 0
            r.cpu_mem = r.self_cpu_mem = r.cuda_mem = r.self_cuda_mem = 0
            r.order = len(rows)
            r.shapes = ev.shapes if group_by_input_shapes else ""
            r.top_level = ev.parent is None
            r.is_async = ev.is_async
            r.flops = None
            rows[k] = r
        r.count += 1
        r.cpu_total += ev.cpu_total
        r.self_cpu += ev.self_cpu
        r.cuda_total += ev.device_total(memo)
        r.self_cuda += ev.self_device(memo)
        r.cpu_mem += ev.cpu_mem
        r.self_cpu_mem += ev.self_cpu_mem()
        r.cuda_mem += ev.cuda_mem
        r.self_cuda_mem += ev.self_cuda_mem()
        if ev.flops is not None:
            r.flops = (r.flops or 0) + ev.flops
    return list(rows.values())


# P6 sorts by getattr(FunctionEventAvg, sort_by with cuda -> device); what each key reads.
SORT_KEYS = {
    "self_cuda_time_total": lambda r: r.self_cuda,
    "cuda_time_total": lambda r: r.cuda_total,
    "self_cpu_time_total": lambda r: r.self_cpu,
    "cpu_time_total": lambda r: r.cpu_total,
    "cpu_time": lambda r: r.cpu_avg,
    "cuda_time": lambda r: r.cuda_avg,
    "count": lambda r: r.count,
    "cpu_memory_usage": lambda r: r.cpu_mem,
    "self_cpu_memory_usage": lambda r: r.self_cpu_mem,
    "cuda_memory_usage": lambda r: r.cuda_mem,
    "self_cuda_memory_usage": lambda r: r.self_cuda_mem,
    "flops": lambda r: r.flops,        # None: the trace carries no flops
}
for _k in list(SORT_KEYS):
    if "cuda" in _k:
        SORT_KEYS[_k.replace("cuda", "device")] = SORT_KEYS[_k]


class Oracle:
    def __init__(self, rows):
        self.rows = rows
        # P6 _build_table: the Self CPU total sums every row; the Self CUDA total only device
        # rows that are not user annotations (the GPU-span rows are left out of it). Both over
        # every row, also those that top_level_events_only or row_limit do not print.
        self.self_cpu_total = sum(r.self_cpu for r in rows)
        self.self_cuda_total = sum(r.self_cuda for r in rows
                                   if r.device == CUDA and not r.is_user_annotation)
        self.has_device_time = any(r.self_cuda > 0 for r in rows)
        self.has_device_mem = any(r.self_cuda_mem > 0 for r in rows)
        self.has_input_shapes = any(r.shapes for r in rows)

    def sort_value(self, sort_by):
        """The function giving a row's sort value, or None when the oracle does not know it
        (an unknown key; flops without flops in the trace)."""
        if sort_by is None:
            return lambda r: 0
        key = SORT_KEYS.get(sort_by)
        if key is None or (sort_by == "flops" and any(r.flops is None for r in self.rows)):
            return None
        return key

    def sorted_rows(self, sort_by="self_cuda_time_total"):
        """P6: sorted(..., reverse=True) is stable: ties keep key_averages' order; no sort_by
        keeps that order. A key the oracle does not know keeps it too."""
        key = self.sort_value(sort_by) or (lambda r: 0)
        return sorted(sorted(self.rows, key=lambda r: r.order), key=key, reverse=True)


def derive(trace_path, group_by_input_shapes=False, **kw):
    return Oracle(key_averages(build_events(_load_json(trace_path), **kw),
                               group_by_input_shapes=group_by_input_shapes))


def derive_events(trace_path, **kw):
    """The FunctionEvents of a trace (for deriving several groupings from one read)."""
    return build_events(_load_json(trace_path), **kw)


# --------------------------------------------------------------------------------------------
# Where PyTorch's own rules make the table contradict its trace (the validator's true findings)
# --------------------------------------------------------------------------------------------

CAUSE_OVERHEAD = "overhead_double_count"   # kernels counted again under an overhead event
CAUSE_SPAN = "annotation_span"             # pytorch#130730: a GPU span counted as Self CUDA
CAUSE_RENAMED = "name_written_unknown"     # K2: the trace writes a non-ASCII name "unknown"
RENAMED = "unknown"


def kineto_renames(name):
    """K2: Kineto's JSON export writes a name holding any byte std::isprint rejects in the C
    locale (outside 0x20..0x7e: every non-ASCII UTF-8 byte, control characters) as "unknown";
    PyTorch's table, printed from its own events, keeps the name."""
    return any(b < 0x20 or b >= 0x7f for b in name.encode("utf-8"))


def records_device_activity(trace):
    """K1: False when the trace has no device record (kernel, memcpy, memset, GPU span,
    overhead, sync): a profile without ProfilerActivity.CUDA records Kineto's kCpuTypes only
    (the runtime and driver calls, with their ac2g flow starts), also the legacy
    torch.autograd.profiler.profile(use_device="cuda"), whose export is that Kineto JSON."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return any(isinstance(e, dict) and e.get("ph") == "X" and
               (e.get("cat") in DEVICE_CATS or e.get("cat") == OVERHEAD_CAT) for e in events)

_CUDA_COLS = ("Self CUDA", "CUDA total")


def _close(a_ns, b_ns):
    # the table prints microseconds with three decimals: equal when they print the same
    return abs(a_ns - b_ns) < 0.5 or format_time(a_ns / 1000.0) == format_time(b_ns / 1000.0)


def defects_full(trace_path):
    """[(full event name, cause)] of every row defects() lists (names uncut, for matching rows
    of tables printed with any max_name_column_width)."""
    return sorted({(n, c) for n, _, c, _, _, _ in defects(trace_path, cut=False)})


def defects(trace_path, cut=True):
    """The rows where key_averages, following PyTorch's rules, shows device time the trace does
    not have: [(display name, kind, cause, column, table_ns, trace_ns)], sorted.

    - overhead_double_count: the row's Self CUDA or CUDA total as PyTorch computes it differs
      from the same computation where overhead events take no kernels (an overhead event row
      with Self CUDA, and the ops and API calls around it with a CUDA total above their kernels).
    - annotation_span (pytorch#130730): a GPU-span row (gpu_user_annotation) whose Self CUDA,
      the sum of its spans, is above the device time that ran inside those spans on their lanes.
    """
    trace = _load_json(trace_path)
    o = Oracle(key_averages(build_events(trace)))
    t = Oracle(key_averages(build_events(trace, overhead_kernels=False)))
    truth = {(r.name, r.device, r.is_user_annotation): r for r in t.rows}
    out = []
    memo = {}
    for r in o.rows:
        k = (r.name, r.device, r.is_user_annotation)
        tr = truth.get(k)
        if tr is None:
            continue
        for col, a, b in (("Self CUDA", r.self_cuda, tr.self_cuda), ("CUDA total", r.cuda_total, tr.cuda_total)):
            if not _close(a, b):
                out.append((display_name(r.name) if cut else r.name, r.kind, CAUSE_OVERHEAD,
                            col, a, b))
    # GPU spans against the device work inside them, per span event and lane
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    dev = {}
    spans = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            s0 = _ns(e["ts"])
            dev.setdefault((e.get("pid"), e.get("tid")), []).append((s0, s0 + _ns(e.get("dur", 0))))
        elif cat == "gpu_user_annotation":
            s0 = _ns(e["ts"]) + ANNOTATION_EXPORT_WIDENING_NS // 2
            d = max(0, _ns(e.get("dur", 0)) - ANNOTATION_EXPORT_WIDENING_NS)
            spans.append((rewrite_name(e.get("name", "")), (e.get("pid"), e.get("tid")), s0, s0 + d))
    inside = {}
    for name, lane, a, b in spans:
        busy = sum(y - x for x, y in dev.get(lane, ()) if x >= a - 1 and y <= b + 1)
        inside[name] = inside.get(name, 0) + busy
    for r in o.rows:
        if r.kind == "gpu_annotation" and r.name in inside and r.self_cuda > inside[r.name] \
                and not _close(r.self_cuda, inside[r.name]):
            out.append((display_name(r.name) if cut else r.name, r.kind, CAUSE_SPAN, "Self CUDA",
                        r.self_cuda, inside[r.name]))
    return sorted(out)


CORPORA = {
    "torch-h200-corpus": ["compile", "cuda_graph", "linear_fwd_bwd", "long_names", "memory_stack",
                          "nested_same_name", "tiny_ops_20k", "transformer_train_adamw",
                          "two_streams"],
    "torch-h200": ["64_bf16_matmul", "64_bf16_add", "64_bf16_addmm", "4096_bf16_matmul",
                   "4096_bf16_add", "4096_bf16_addmm"],
    # issue 37's classes, derived from the exports above by tests/data/torch-derived/make.py
    "torch-derived": ["cpu_only", "cuda_only", "legacy", "non_ascii", "triton_direct"],
}


def renamed_rows(trace_path, table_path):
    """[(table name, kind)] of the table's rows whose names the trace writes "unknown" (K2): the
    real disagreements of cause name_written_unknown (table_compare pairs them with the trace's
    "unknown" rows and judges their cells there)."""
    import table_compare as tc
    import table_text as tt2
    with open(table_path, encoding="utf-8") as f:
        t = tt2.parse_table(f.read())
    c = tc.compare(derive(trace_path), t)
    return sorted({(d.row, d.kind) for d in c.disagreements if d.why == tc.WHY_RENAMED})


def expectations(data_dir):
    """{ "<corpus>/<workload>": [ {row, kind, cause, columns, table_us, trace_us}, ... ] } for
    every committed PyTorch export: what the validator must report, and nothing else."""
    import os
    out = {}
    for corpus, ws in CORPORA.items():
        for w in ws:
            p = os.path.join(data_dir, corpus, w + ".json")
            if not os.path.exists(p):
                p += ".gz"
            rows = {}
            for name, kind, cause, col, a, b in defects(p):
                r = rows.setdefault((name, kind, cause), {"row": name, "kind": kind, "cause": cause,
                                                          "columns": {}})
                r["columns"][col] = {"table": format_time(a / 1000.0), "trace": format_time(b / 1000.0)}
            for name, kind in renamed_rows(p, os.path.join(data_dir, corpus, w + ".txt")):
                rows[(name, kind, CAUSE_RENAMED)] = {"row": name, "kind": kind, "cause": CAUSE_RENAMED,
                                                     "columns": {"Name": {"table": name, "trace": RENAMED}}}
            out[corpus + "/" + w] = [rows[k] for k in sorted(rows)]
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] == "--expectations":
        # python3 key_averages.py --expectations tests/data > tests/torch_oracle/expected_findings.json
        print(json.dumps(expectations(argv[2]), indent=1, sort_keys=True))
        return 0
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    import table_compare   # the table side: its CLI compares too (here, for the README's usage)
    if len(argv) > 2:
        return table_compare.main(argv)
    print(table_compare.render(derive(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
