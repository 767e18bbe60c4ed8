#!/usr/bin/env python3
"""crossbench's counter pass (counters.json) against Nsight Compute, per call (issue 18).

    python3 scripts/counters_vs_ncu.py SWEEP_DIR NCU_DIR "LABEL"

SWEEP_DIR holds counters.json (bench sweep --counters); NCU_DIR one CSV per fixture,
<op>_<dtype>_<n>.csv, from `ncu --csv --print-units base --metrics ...` on the ncu probe
(tests/gpu/test_counters_gpu.cpp, CounterProbeOneCallForNsightCompute: one unprofiled call, then
2K back-to-back calls between cudaProfilerStart/Stop). crossbench's per call: its K profiled
calls' totals / K (after K warm-up calls); ncu's: the last K calls' kernels / K (the first K are
the warm-up; --cache-control none keeps the L2 as the calls leave it). LABEL says how ncu
replayed (application or kernel replay) and heads the output.

Verdicts, 2%: DRAM bytes where the fixture's model bytes exceed the L2 (below it back-to-back
calls move next to nothing from DRAM and a relative difference is noise: "not compared", the rule
of the validator's model_vs_counters); tensor FLOPs always; SASS FLOPs only where crossbench
counted them (CUPTI's SASS metrics API offers no per-opcode metric on GH100: reported as "not
counted by CUPTI on this GPU", not as a disagreement); duration reported only (ncu serializes the
kernels). The last line is "AGREE" or "<n> DISAGREEMENTS". Exit 0 whatever the verdict; 2 when
counters.json is unreadable.
"""
import csv
import io
import json
import os
import sys

TOL_PCT = 2.0


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"counters_vs_ncu: {path}: not readable: {e}", file=sys.stderr)
        sys.exit(2)


def figures(values_list, calls, weights):
    """Per call: DRAM bytes, tensor and SASS FLOPs, duration, from one dict of metric values per kernel."""
    q = {"dram_bytes": 0.0, "tensor_flops": 0.0, "sass_flops": 0.0, "duration_ns": 0.0}
    for vals in values_list:
        for name, v in vals.items():
            kind, wt = weights.get(name, (None, 0))
            if kind in ("dram_read_bytes", "dram_write_bytes"):
                q["dram_bytes"] += v
            elif kind in ("sass_flops", "tensor_flops"):
                q[kind] += v * wt
            elif kind == "duration_ns":
                q["duration_ns"] += v
    return {k: v / calls for k, v in q.items()}


def ncu_kernels(path):
    """One dict of metric values per profiled kernel, in ID order; (None, tail of the file) when none."""
    with open(path, errors="replace") as f:
        text = f.read()
    start = text.find('"ID"')
    if start < 0:
        return None, text[-400:]
    kernels = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        if "Metric Name" not in r or not (r.get("ID") or "").isdigit():
            continue
        v = (r.get("Metric Value") or "").replace(",", "")
        try:
            x = float(v)
        except ValueError:
            continue
        kernels.setdefault(r["ID"], {})[r["Metric Name"]] = x
    return [kernels[k] for k in sorted(kernels, key=int)], ""


def main():
    if len(sys.argv) != 4:
        print("usage: counters_vs_ncu.py SWEEP_DIR NCU_DIR LABEL", file=sys.stderr)
        return 2
    sweep, ncu_dir, label = sys.argv[1:]
    c = load(os.path.join(sweep, "counters.json"))
    weights = {m["name"]: (m["quantity"], m["weight"]) for m in c["metrics"]}
    l2 = c["device"]["l2_bytes"]
    print(f"# {label}: crossbench's counters (per call: K profiled calls / K) against Nsight Compute (last K of 2K "
          f"calls / K); DRAM bytes and tensor FLOPs within {TOL_PCT:g}%")
    print(f"{'fixture':22} {'quantity':12} {'crossbench':>16} {'ncu':>16} {'diff':>8}  verdict ({TOL_PCT:g}%), per call")
    bad = compared = 0
    for f in c["fixtures"]:
        path = os.path.join(ncu_dir, f["name"].replace("/", "_") + ".csv")
        if not os.path.exists(path):
            continue
        compared += 1
        if f["error"]:
            print(f"{f['name']:22} crossbench error: {f['error']}")
            bad += 1
            continue
        ks, tail = ncu_kernels(path)
        if not ks:
            print(f"{f['name']:22} ncu gave no metrics: ...{tail!r}")
            bad += 1
            continue
        k = f["calls"]
        per_call = max(1, len(f["kernels"]) // k)
        last = ks[-k * per_call:]
        sass = f.get("sass", {}).get("values", {})
        sass_note = "counted" if sass else "not counted by CUPTI on this GPU (" + f.get("sass", {}).get("error", "none") + ")"
        a = figures([x["values"] for x in f["kernels"]] + ([sass] if sass else []), k, weights)
        b = figures(last, k, weights)
        ok_count = len(ks) == 2 * k * per_call
        bad += 0 if ok_count else 1
        print(f"{f['name']:22} K = {k}: crossbench {len(f['kernels'])} kernels ({per_call} per call), ncu {len(ks)} kernels "
              f"of 2K calls ({'ok' if ok_count else 'OFF: expected ' + str(2 * k * per_call)}), last {len(last)} compared; "
              f"SASS: {sass_note}")
        model_bytes, model_flops = f["model"]["bytes"], f["model"]["flops"]
        in_l2 = model_bytes < l2
        for q in ("dram_bytes", "tensor_flops", "sass_flops", "duration_ns"):
            d = (a[q] / b[q] - 1) * 100 if b[q] else (0.0 if a[q] == 0 else float("nan"))
            if q == "sass_flops" and not sass:
                print(f"{'':22} {q:12} {'not counted':>16} {b[q]:16.0f} {'':>8}  not counted by CUPTI on this GPU "
                      "(ncu instruments the SASS itself)")
                continue
            if q == "dram_bytes" and in_l2:
                print(f"{'':22} {q:12} {a[q]:16.0f} {b[q]:16.0f} {d:+7.2f}%  not compared: the model's {model_bytes:.0f} B "
                      f"fit in the {l2} B L2")
                continue
            only = q == "duration_ns"
            ok = only or abs(d) <= TOL_PCT or (a[q] == 0 and b[q] == 0)
            bad += 0 if ok else 1
            print(f"{'':22} {q:12} {a[q]:16.0f} {b[q]:16.0f} {d:+7.2f}%  {'ok' if ok else 'OFF'}"
                  f"{' (reported only)' if only else ''}")
        if model_bytes and f["op"] == "add" and not in_l2:
            print(f"{'':22} {'vs model':12} DRAM bytes per call: crossbench {(a['dram_bytes'] / model_bytes - 1) * 100:+.2f}%, "
                  f"ncu {(b['dram_bytes'] / model_bytes - 1) * 100:+.2f}% of {model_bytes:.0f}")
        if model_flops and f["op"] != "add" and a["tensor_flops"]:
            print(f"{'':22} {'vs model':12} tensor FLOPs per call: crossbench {(a['tensor_flops'] / model_flops - 1) * 100:+.4f}%, "
                  f"ncu {(b['tensor_flops'] / model_flops - 1) * 100:+.4f}% of the useful {model_flops:.0f} "
                  "(more: tile quantization, validation.json's model_vs_counters)")
    if compared == 0:
        print(f"no ncu CSV in {ncu_dir} matches a fixture of counters.json")
        bad += 1
    print("AGREE" if bad == 0 else f"{bad} DISAGREEMENTS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
