#!/usr/bin/env python3
"""Does programmatic dependent launch (PDL) make kernels of one stream overlap in Kineto's trace?

Usage: python3 tools/lab/pdl_overlap/probe.py LIB.so OUT_DIR
(LIB.so: nvcc -arch=sm_90 -shared -Xcompiler -fPIC -o LIB.so tools/lab/pdl_overlap/pdl_pair.cu)

Under one torch.profiler session it launches, on PyTorch's current stream, 20 producer/consumer
pairs without the PDL attribute and 20 with it, each pair inside record_function("pdl=0"/"pdl=1"),
exports the Chrome trace to OUT_DIR/pdl_pair.json and prints, per mode, how many consumers started
before their producer ended and by how much (ns, from the trace's microsecond timestamps).
"""
import ctypes
import json
import os
import sys


def main():
    lib_path, out = sys.argv[1], sys.argv[2]
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    os.makedirs(out, exist_ok=True)
    lib = ctypes.CDLL(lib_path)
    assert lib.pdl_setup(1 << 22) == 0
    stream = torch.cuda.current_stream().cuda_stream
    for pdl in (0, 1):  # warm-up
        assert lib.pdl_launch(ctypes.c_ulonglong(stream), pdl, 2000) == 0
    assert lib.pdl_sync() == 0
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for pdl in (0, 1):
            for _ in range(20):
                with record_function("pdl=%d" % pdl):
                    assert lib.pdl_launch(ctypes.c_ulonglong(stream), pdl, 2000) == 0
        assert lib.pdl_sync() == 0
    path = os.path.join(out, "pdl_pair.json")
    prof.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"]
          if e.get("cat") == "kernel" and e.get("ph") == "X"]
    res = {"0": [], "1": []}
    # pairs: producer followed by consumer, in launch order (correlation ids ascend)
    ev.sort(key=lambda e: e["args"]["correlation"])
    for i in range(0, len(ev) - 1, 2):
        p, c = ev[i], ev[i + 1]
        if "producer" not in p["name"] or "consumer" not in c["name"]:
            continue
        mode = "0" if i < 40 else "1"
        overlap_ns = round((float(p["ts"]) + float(p["dur"]) - float(c["ts"])) * 1000)
        res[mode].append(overlap_ns)
    summary = {}
    for m, v in res.items():
        pos = [x for x in v if x > 0]
        summary["pdl=" + m] = {"pairs": len(v), "consumer_started_before_producer_end": len(pos),
                               "overlap_ns_max": max(pos) if pos else 0,
                               "overlap_ns_median": sorted(pos)[len(pos) // 2] if pos else 0}
    summary["gpu"] = torch.cuda.get_device_name(0)
    summary["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
    summary["torch"] = torch.__version__
    json.dump(summary, open(os.path.join(out, "pdl_summary.json"), "w"), indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
