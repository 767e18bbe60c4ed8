#!/usr/bin/env python3
"""Turns fixtures of a crossbench events.json into a baseline file (docs/formats.md, "baseline"),
for the qualification tests' real H200 inputs:

  python3 events_to_baseline.py EVENTS.json RAW_SESSION.json OUT.json FIXTURE...

The environment block comes from RAW_SESSION.json's meta (events.json carries no GPU name or
driver); samples, NVML snapshots and settings come from EVENTS.json's timing blocks. Samples are
rounded to 0.001 ns and stats recomputed from them, as bench qualify --update-baseline does."""
import json
import statistics
import sys


def sample(s):
    keys = ["valid", "sm_clock_mhz", "mem_clock_mhz", "temperature_c", "power_w", "throttle_reasons", "throttled"]
    return {k: s[k] for k in keys}


def main():
    events, session, out, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    ev = json.load(open(events))
    meta = json.load(open(session))["meta"]
    gpu = meta["gpu"]
    doc = {
        "crossbench": {"format": "baseline", "version": 1, "created_utc": ev["crossbench"]["created_utc"]},
        "suite": "h200-timing-2026-11-29",
        "environment": {
            "gpu_name": meta["devices"][0]["name"], "gpu_uuid": gpu["uuid"], "driver_version": gpu["driver_version"],
            "cuda_driver_version": ev["crossbench"]["cuda_driver_version"],
            "cuda_runtime_version": ev["crossbench"]["cuda_runtime_version"],
            "cublas_version": ev["crossbench"]["cublas_version"], "cupti_version": ev["crossbench"]["cupti_version"],
            "power_limit_w": gpu["power_limit_w"], "sm_clock_max_mhz": gpu["sm_clock_max_mhz"],
            "mem_clock_max_mhz": gpu["mem_clock_max_mhz"],
            "clocks_at_start": sample(gpu["at_start"]), "clocks_at_end": sample(gpu["at_end"])},
        "fixtures": []}
    for f in ev["fixtures"]:
        if f["name"] not in names:
            continue
        t = f["timing"]
        xs = [round(x, 3) for x in t["samples_ns"]]
        doc["fixtures"].append({
            "name": f["name"], "op": f["op"], "dtype": f["dtype"], "size": f["size"], "mode": t["mode"],
            "flops": f["flops"], "bytes": f["bytes"], "launches_per_sample": t["launches_per_sample"],
            "warmed_up": t["warmed_up"], "stop": t["stop"], "max_noise": t["max_noise"], "sampling_s": t["sampling_s"],
            "throttled": t["gpu_before"]["throttled"] or t["gpu_after"]["throttled"],
            "gpu_before": sample(t["gpu_before"]), "gpu_after": sample(t["gpu_after"]),
            "stats": {"count": len(xs), "median_ns": statistics.median(xs), "min_ns": min(xs), "max_ns": max(xs),
                      "mean_ns": statistics.fmean(xs), "stddev_ns": statistics.stdev(xs)},
            "samples_ns": xs})
    with open(out, "w") as o:
        json.dump(doc, o, separators=(",", ":"))
        o.write("\n")


if __name__ == "__main__":
    main()
