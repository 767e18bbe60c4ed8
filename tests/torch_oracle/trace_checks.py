"""The oracle's own trace checks: stream overlap and launch-to-kernel flows, re-derived from a
PyTorch Chrome trace in plain Python (read with key_averages.py's reader; no code shared with validate/).

Rules (each what the validator must agree with; docs/validator.md):
  O1  Device activities (kernel, gpu_memcpy, gpu_memset) of one lane (pid = device, tid = stream)
      do not overlap, except (a) consecutive nodes of one CUDA graph launch (the same correlation
      id, a cudaGraphLaunch/cuGraphLaunch call) by up to 2 us, CUPTI's timestamps of graph replays,
      and (b) on a device of compute capability 9.0 or more (the trace's deviceProperties) any
      overlap: programmatic dependent launch (CUDA Programming Guide, "Programmatic Dependent
      Launch and Synchronization"; results/h200/pdl-2026-12-03). Without deviceProperties an
      overlap is not judged.
  F1  Every ac2g flow start ("s") is on an API call and every flow end ("f") on a device activity
      or API call of the same correlation id (Kineto also writes both ends on calls that launch
      nothing, e.g. cudaDeviceGetAttribute). A flow start whose call put no record on the device is a
      finding when the call launches device work, except memset/memcpy calls, which Kineto
      flows also at zero bytes (the trace does not carry the size): not judged. A trace with no
      device record at all (a profile without ProfilerActivity.CUDA: kineto_shim.cpp kCpuTypes)
      keeps the runtime calls and their flow starts: none of them is judged.
  S1  Every gpu_user_annotation span (1 ns wider at each end, as Kineto writes it) is the first
      start to the last end, on its stream, of the device activities whose launch call was made
      inside its user_annotation, the innermost one open on the call's own thread: Kineto extends
      the span of the annotation CUPTI's CUSTOM1 correlation names (libkineto
      GenericActivityProfiler::handleGpuActivity, userCorrelationMap_), which PyTorch pushes for
      USER_SCOPE record functions only (torch/csrc/profiler/collection.cpp begin_op), whatever
      the call's External id (CUSTOM0) names: launches without one (Triton, driver API, graph
      replays) count.
"""
import bisect

from key_averages import _load_json as _load, _ns  # one reader of the export: exact Decimal times
from key_averages import is_async_event, records_device_activity

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
API_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
GRAPH_LAUNCHES = {"cudaGraphLaunch", "cuGraphLaunch", "cudaGraphLaunch_v10000", "cuGraphLaunch_ptsz"}
GRAPH_NODE_OVERLAP_NS = 2000


def _launches_device_work(name):
    n = name.lower()
    return any(w in n for w in ("launch", "memcpy", "memset"))


def check_trace(path):
    """{"overlap": [(correlation, ns)], "pdl": [(correlation, ns)], "graph": [...],
    "overlap_not_judged": [...], "flows": [(correlation, why)], "flows_not_judged": [...]}"""
    t = _load(path)
    events = t["traceEvents"] if isinstance(t, dict) else t
    cc = {}
    for d in (t.get("deviceProperties") or []) if isinstance(t, dict) else []:
        if isinstance(d, dict) and isinstance(d.get("computeMajor"), int):
            cc[d.get("id")] = d["computeMajor"] * 10 + int(d.get("computeMinor", 0))
    dev, api, s_ids, f_ids = {}, {}, {}, {}
    lanes = {}
    for e in events:
        if not isinstance(e, dict):
            continue
        cat, ph, args = e.get("cat"), e.get("ph"), e.get("args") or {}
        if ph == "X" and cat in DEVICE_CATS:
            c = int(args.get("correlation", 0))
            s0 = _ns(e["ts"])
            item = (s0, s0 + _ns(e.get("dur", 0)), c)
            lanes.setdefault((e.get("pid"), e.get("tid")), []).append(item)
            dev.setdefault(c, []).append(e)
        elif ph == "X" and cat in API_CATS and "correlation" in args:
            api[int(args["correlation"])] = e.get("name", "")
        elif cat == "ac2g" and ph in ("s", "f"):
            (s_ids if ph == "s" else f_ids).setdefault(int(e.get("id", 0)), []).append(e)
    out = {"overlap": [], "pdl": [], "graph": [], "overlap_not_judged": [], "flows": [],
           "flows_not_judged": [], "flows_device_not_recorded": 0, "spans": []}
    for (pid, _tid), items in lanes.items():
        items.sort()
        prev = None
        for it in items:
            if prev is not None and it[0] < prev[1]:
                ov = prev[1] - it[0]
                if it[2] == prev[2] and api.get(it[2]) in GRAPH_LAUNCHES and ov <= GRAPH_NODE_OVERLAP_NS:
                    out["graph"].append((it[2], ov))
                elif not cc:
                    out["overlap_not_judged"].append((it[2], ov))
                elif cc.get(pid, 0) >= 90:
                    out["pdl"].append((it[2], ov))
                else:
                    out["overlap"].append((it[2], ov))
            if prev is None or it[1] > prev[1]:
                prev = it
    recorded = records_device_activity(t)
    for c in s_ids:
        if c in dev:
            continue
        name = api.get(c)
        if name is None:
            out["flows"].append((c, "flow start on no API call"))
        elif not recorded:
            out["flows_device_not_recorded"] += 1
        elif "memset" in name.lower() or "memcpy" in name.lower():
            out["flows_not_judged"].append((c, name))
        elif _launches_device_work(name):
            out["flows"].append((c, "flow start on '%s' with no device record" % name))
    for c in f_ids:
        if c not in dev and c not in api:
            out["flows"].append((c, "flow end on no device activity or API call"))
    out["spans"] = _span_findings(events)
    return out


def _span_findings(events):
    """S1: [(External id, why)] of the gpu_user_annotation spans that are not Kineto's span of
    their annotation's device work."""
    annots, calls, acts, spans = {}, {}, [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat, args = e.get("cat"), e.get("args") or {}
        th = (e.get("pid"), e.get("tid"))
        s0 = _ns(e["ts"])
        s1 = s0 + _ns(e.get("dur", 0))
        if cat == "user_annotation" and not is_async_event(cat, e.get("name", "")):
            annots.setdefault(th, []).append((s0, -s1, int(args.get("External id", 0))))
        elif cat in API_CATS and "correlation" in args:
            calls[int(args["correlation"])] = (th, s0, s1)
        elif cat in DEVICE_CATS:
            acts.append((int(args.get("correlation", 0)), th, s0, s1))
        elif cat == "gpu_user_annotation":
            spans.append((int(args.get("External id", 0)), th, s0, s1))
    for a in annots.values():
        a.sort()
    starts = {th: [x[0] for x in a] for th, a in annots.items()}
    want = {}
    for corr, lane, s0, s1 in acts:
        call = calls.get(corr)
        if call is None:
            continue
        th, c0, c1 = call
        a = annots.get(th, [])
        k = bisect.bisect_right(starts.get(th, []), c0)
        owner = None
        for j in range(k - 1, -1, -1):       # the latest-starting annotation holding the call
            if -a[j][1] >= c1:
                owner = a[j][2]
                break
        if owner is not None:
            lo, hi = want.get((owner, lane), (s0, s1))
            want[(owner, lane)] = (min(lo, s0), max(hi, s1))
    out = []
    for ext, lane, s0, s1 in spans:
        w = want.get((ext, lane))
        if w is None:
            out.append((ext, "no device work launched inside its annotation on this stream"))
        elif abs(s0 + 1 - w[0]) > 1 or abs(s1 - 1 - w[1]) > 1:
            out.append((ext, "span %d..%d ns, its device work %d..%d ns" % (s0, s1, w[0], w[1])))
    return out
