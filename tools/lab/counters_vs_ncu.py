#!/usr/bin/env python3
"""crossbench's counter pass (counters.json) against Nsight Compute, per call (issue 18).

    python3 tools/lab/counters_vs_ncu.py [--fresh FRESH_DIR] SWEEP_DIR NCU_DIR "LABEL"

NCU_DIR holds one CSV per fixture, <op>_<dtype>_<n>.csv, from `ncu --csv --print-units base
--metrics ...` on the ncu probe (tests/gpu/test_counters_gpu.cpp, CounterProbeOneCallForNsightCompute:
one unprofiled call, then 2K back-to-back calls between cudaProfilerStart/Stop). SWEEP_DIR holds
counters.json (bench sweep --counters: the counter pass after the sweep's timing pass). FRESH_DIR,
when given, holds <op>_<dtype>_<n>/counters.json per fixture: crossbench's counter pass on that
fixture alone in a fresh process, run right before ncu's probe of it (CounterPassProbeInAFreshProcess;
tools/lab/h200_counters.sh), so both passes find the GPU in the same state. Beside a CSV or a fresh
folder, <op>_<dtype>_<n>.gpu.csv (optional) holds the GPU's state around that run: lines
"before|during|after, <SM clock MHz>, <power W>[, <temperature C>]" (nvidia-smi
--query-gpu=clocks.sm,power.draw,temperature.gpu; tools/lab/h200_counters.sh samples every 250 ms).
LABEL says how ncu replayed (application or kernel replay) and heads the output.

Tables: with --fresh, first the fresh-process pass against ncu (the fair comparison), then the
sweep's pass against ncu (for reference: the sweep's pass runs after its timing pass, in another
thermal state); without it, the sweep's table only. Each ends with "<which> vs ncu: AGREE" or
"... <n> DISAGREEMENTS"; the output's last line is the first table's verdict alone.

Per call: crossbench's K profiled calls (after K warm-up calls); ncu's last K of 2K calls (the
first K are the warm-up; --cache-control none keeps the L2 as the calls leave it). Each call's
value is the sum over its kernels. Compared: the MEDIANS of the K per-call values; the spread of
each side (min / median / max over the K calls, and (max - min) / median) is printed for DRAM
bytes and duration. docs/metrics.md ("Comparing with Nsight Compute") gives the rule:

  ok       medians within 2% (a spread above 2% on either side is said beside it: medians compared)
  OFF      medians more than 2% apart; when crossbench's median lies inside ncu's own min..max over
           its K calls, the row says so ("inside ncu's own call-to-call spread"), and the row is
           still a disagreement (counted apart in the verdict line)

DRAM bytes are compared where the fixture's model bytes exceed the L2 (below it back-to-back calls
move next to nothing from DRAM and a relative difference is noise: "not compared", the rule of
the validator's model_vs_counters); tensor FLOPs always; SASS FLOPs only where crossbench counted
them (CUPTI's SASS metrics API offers no per-opcode metric on GH100: "not counted by CUPTI on this
GPU", not a disagreement); duration reported only, with whether the two kernel durations match
within 3% (the state the kernels ran in; ncu serializes the kernels). Exit 0 whatever the verdict;
2 for bad usage or an unreadable SWEEP_DIR/counters.json (one line on stderr).
"""
import csv
import io
import json
import os
import statistics
import sys

TOL_PCT = 2.0          # the agreement tolerance on medians (issue 18's done-when)
STATE_TOL_PCT = 3.0    # kernel durations within this: the two passes ran in the same state
QUANTITIES = ("dram_bytes", "tensor_flops", "sass_flops", "duration_ns")


class Unreadable(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Unreadable(f"{path}: not readable: {e}")


def per_call(kernels, calls, weights, sass_totals=None):
    """{quantity: [value of each of `calls` calls]} from one dict of metric values per kernel, the
    kernels of `calls` calls in launch order (len(kernels) // calls per call); `sass_totals`
    (metric -> total over the calls: SASS patching counts per fixture) shared evenly."""
    per = max(1, len(kernels) // calls)
    out = {q: [0.0] * calls for q in QUANTITIES}
    for i, vals in enumerate(kernels[:per * calls]):
        c = i // per
        for name, v in vals.items():
            kind, wt = weights.get(name, (None, 0))
            if kind in ("dram_read_bytes", "dram_write_bytes"):
                out["dram_bytes"][c] += v
            elif kind in ("sass_flops", "tensor_flops"):
                out[kind][c] += v * wt
            elif kind == "duration_ns":
                out["duration_ns"][c] += v
    for name, total in (sass_totals or {}).items():
        kind, wt = weights.get(name, (None, 0))
        if kind == "sass_flops":
            for c in range(calls):
                out["sass_flops"][c] += total * wt / calls
    return out


def spread(values):
    """(min, median, max, (max - min) / median in %; 0 for a zero median)."""
    lo, med, hi = min(values), statistics.median(values), max(values)
    return lo, med, hi, (hi - lo) / med * 100 if med else 0.0


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


def gpu_state(path):
    """'SM a -> b MHz, c -> d W[, e -> f C] before -> after (during: SM lo..hi MHz, median m, up to p W,
    n samples)' from a .gpu.csv (lines 'before|during|after, MHz, W[, C]'), or None."""
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                try:
                    rows.setdefault(parts[0], []).append(tuple(float(x) for x in parts[1:4]))
                except ValueError:
                    continue  # a header, "[N/A]", an error line
    except OSError:
        return None
    rows = {k: [r for r in v if len(r) >= 2] for k, v in rows.items()}
    rows = {k: v for k, v in rows.items() if v}
    if not rows:
        return None

    def one(phase, i):
        r = rows.get(phase, [()])[0]
        return f"{r[i]:.0f}" if len(r) > i else "?"

    text = f"SM {one('before', 0)} -> {one('after', 0)} MHz, {one('before', 1)} -> {one('after', 1)} W"
    if one("before", 2) != "?" or one("after", 2) != "?":
        text += f", {one('before', 2)} -> {one('after', 2)} C"
    text += " before -> after"
    during = rows.get("during")
    if during:
        clocks = [r[0] for r in during]
        text += (f" (during: SM {min(clocks):.0f}..{max(clocks):.0f} MHz, median {statistics.median(clocks):.0f}, "
                 f"up to {max(r[1] for r in during):.0f} W, {len(during)} samples)")
    return text


def fmt_spread(s):
    return f"{s[0]:.0f} / {s[1]:.0f} / {s[2]:.0f} ({s[3]:.2f}%)"


def compare(name, f, weights, l2, ncu_csv, state_a, state_b):
    """Prints one fixture's rows; returns (disagreements, of them inside ncu's own spread)."""
    if f["error"]:
        print(f"{name:22} crossbench error: {f['error']}")
        return 1, 0
    ks, tail = ncu_kernels(ncu_csv)
    if not ks:
        print(f"{name:22} ncu gave no metrics: ...{tail!r}")
        return 1, 0
    k = f["calls"]
    per = max(1, len(f["kernels"]) // k)
    last = ks[-k * per:]
    sass = f.get("sass", {}).get("values", {})
    sass_note = "counted" if sass else "not counted by CUPTI on this GPU (" + f.get("sass", {}).get("error", "none") + ")"
    a = per_call([x["values"] for x in f["kernels"]], k, weights, sass)
    b = per_call(last, k, weights)
    # ncu's probe ran 2K' calls: K' = K, or more (XB_COUNTER_CALLS gives the probes a larger K than
    # the sweep's pass has); either way its last K calls are compared.
    ncu_calls = len(ks) // per
    ok_count = len(ks) % per == 0 and ncu_calls >= 2 * k
    bad = 0 if ok_count else 1
    inside = 0
    calls_text = ("of 2K calls" if ncu_calls == 2 * k else f"of {ncu_calls} calls") + \
        (" (ok)" if ok_count else f" (OFF: expected {2 * k * per} or more, a whole number of calls)")
    print(f"{name:22} K = {k}: crossbench {len(f['kernels'])} kernels ({per} per call), ncu {len(ks)} kernels "
          f"{calls_text}, last {len(last)} compared; SASS: {sass_note}")
    model_bytes, model_flops = f["model"]["bytes"], f["model"]["flops"]
    in_l2 = model_bytes < l2
    med_a, med_b = {}, {}
    for q in QUANTITIES:
        sa, sb = spread(a[q]), spread(b[q])
        ma, mb = med_a[q], med_b[q] = sa[1], sb[1]
        d = (ma / mb - 1) * 100 if mb else (0.0 if ma == 0 else float("nan"))
        if q == "sass_flops" and not sass:
            print(f"{'':22} {q:12} {'not counted':>16} {mb:16.0f} {'':>8}  not counted by CUPTI on this GPU "
                  "(ncu instruments the SASS itself)")
            continue
        if q == "dram_bytes" and in_l2:
            print(f"{'':22} {q:12} {ma:16.0f} {mb:16.0f} {d:+7.2f}%  not compared: the model's {model_bytes:.0f} B "
                  f"fit in the {l2} B L2")
            continue
        only = q == "duration_ns"
        wide = max(sa[3], sb[3]) > TOL_PCT
        ok = only or abs(d) <= TOL_PCT or (ma == 0 and mb == 0)
        if ok:
            verdict = "reported only" if only else "ok"
            if wide and not only:
                verdict += f" (medians compared: call-to-call spread above {TOL_PCT:g}%)"
        elif sb[0] <= ma <= sb[2]:
            verdict = (f"OFF, inside ncu's own call-to-call spread ({sb[0]:.0f}..{sb[2]:.0f}): the kernel varies "
                       "that much from call to call")
            inside += 1
        else:
            verdict = "OFF"
        bad += 0 if ok else 1
        print(f"{'':22} {q:12} {ma:16.0f} {mb:16.0f} {d:+7.2f}%  {verdict}")
        if q in ("dram_bytes", "duration_ns"):
            print(f"{'':22} {q[:4] + '_spread':12} per call min / median / max (spread): "
                  f"crossbench {fmt_spread(sa)}, ncu {fmt_spread(sb)}")
    da, db = med_a["duration_ns"], med_b["duration_ns"]
    if da and db:
        rel = (da / db - 1) * 100
        print(f"{'':22} {'state':12} kernel duration medians differ by {rel:+.2f}%: "
              + (f"the same state (within {STATE_TOL_PCT:g}%)" if abs(rel) <= STATE_TOL_PCT
                 else f"NOT the same state (over {STATE_TOL_PCT:g}%: clocks or power differed)"))
    for side, st in (("crossbench", state_a), ("ncu", state_b)):
        if st:
            print(f"{'':22} {'gpu':12} {side}: {st}")
    if model_bytes and f["op"] == "add" and not in_l2:
        print(f"{'':22} {'vs model':12} DRAM bytes per call (median): crossbench {(med_a['dram_bytes'] / model_bytes - 1) * 100:+.2f}%, "
              f"ncu {(med_b['dram_bytes'] / model_bytes - 1) * 100:+.2f}% of {model_bytes:.0f}")
    if model_flops and f["op"] != "add" and med_a["tensor_flops"]:
        print(f"{'':22} {'vs model':12} tensor FLOPs per call: crossbench {(med_a['tensor_flops'] / model_flops - 1) * 100:+.4f}%, "
              f"ncu {(med_b['tensor_flops'] / model_flops - 1) * 100:+.4f}% of the useful {model_flops:.0f} "
              "(more: tile quantization, validation.json's model_vs_counters)")
    return bad, inside


def verdict(bad, inside):
    if bad == 0:
        return "AGREE"
    return f"{bad} DISAGREEMENTS" + (f" ({inside} of them inside ncu's own call-to-call spread)" if inside else "")


def stem(name):
    return name.replace("/", "_")


def table(title, which, rows, ncu_dir):
    """rows: (fixture name, fixture dict or an error line, weights, l2, fresh state file or None)."""
    print(f"## {title}")
    print(f"{'fixture':22} {'quantity':12} {'crossbench':>16} {'ncu':>16} {'diff':>8}  verdict ({TOL_PCT:g}%, "
          "medians of the K calls), per call")
    bad = inside = 0
    for name, f, weights, l2, state_file in rows:
        if isinstance(f, str):
            print(f"{name:22} {f}")
            bad += 1
            continue
        base = os.path.join(ncu_dir, stem(name))
        b, i = compare(name, f, weights, l2, base + ".csv",
                       gpu_state(state_file) if state_file else None, gpu_state(base + ".gpu.csv"))
        bad += b
        inside += i
    if not rows:
        print(f"no ncu CSV in {ncu_dir} matches a fixture of this pass")
        bad += 1
    print(f"{which} vs ncu: {verdict(bad, inside)}")
    return verdict(bad, inside)


def fixture_of(c, name):
    return next((x for x in c["fixtures"] if x["name"] == name), None)


def main(argv):
    fresh = None
    if argv[:1] == ["--fresh"]:
        if len(argv) < 2:
            raise Unreadable("usage: counters_vs_ncu.py [--fresh FRESH_DIR] SWEEP_DIR NCU_DIR LABEL")
        fresh, argv = argv[1], argv[2:]
    if len(argv) != 3:
        raise Unreadable("usage: counters_vs_ncu.py [--fresh FRESH_DIR] SWEEP_DIR NCU_DIR LABEL")
    sweep_dir, ncu_dir, label = argv
    c = load(os.path.join(sweep_dir, "counters.json"))
    if fresh is not None and not os.path.isdir(fresh):
        raise Unreadable(f"{fresh}: not a folder (--fresh FRESH_DIR)")
    csvs = {f[:-4] for f in os.listdir(ncu_dir) if f.endswith(".csv") and not f.endswith(".gpu.csv")} \
        if os.path.isdir(ncu_dir) else set()
    # The fixtures ncu profiled, in the sweep's order, then any others by name.
    order = [x["name"] for x in c["fixtures"] if stem(x["name"]) in csvs]
    order += sorted("/".join(s.rsplit("_", 2)) for s in csvs if s not in {stem(n) for n in order})
    weights = {m["name"]: (m["quantity"], m["weight"]) for m in c["metrics"]}
    print(f"# {label}: crossbench's counters (per call: each of the K profiled calls) against Nsight Compute "
          f"(each of the last K of 2K calls); medians of DRAM bytes and tensor FLOPs within {TOL_PCT:g}%")
    verdicts = []
    if fresh is not None:
        rows = []
        for name in order:
            path = os.path.join(fresh, stem(name), "counters.json")
            try:
                fc = load(path)
            except Unreadable as e:
                rows.append((name, f"no fresh-process counter pass to compare: {e}", None, 0, None))
                continue
            f = fixture_of(fc, name)
            if f is None:
                f = f"{path}: no fixture {name} ({fc.get('status')}: {fc.get('reason', '')})"
                rows.append((name, f, None, 0, None))
                continue
            print(f"# {name}: {fc.get('method', '')}")
            rows.append((name, f, {m["name"]: (m["quantity"], m["weight"]) for m in fc["metrics"]},
                         fc["device"]["l2_bytes"], os.path.join(fresh, stem(name) + ".gpu.csv")))
        verdicts.append(table("crossbench's counter pass in a fresh process right before each ncu probe "
                              "(no timing pass before it) against ncu: the fair comparison", "fresh process", rows, ncu_dir))
        print()
    rows = [(n, fixture_of(c, n), weights, c["device"]["l2_bytes"], None) for n in order if fixture_of(c, n) is not None]
    verdicts.append(table("crossbench's counter pass in the sweep (after its timing pass)"
                          + (", for reference" if fresh is not None else "") + " against ncu", "sweep", rows, ncu_dir))
    print(verdicts[0])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Unreadable as e:
        print(f"counters_vs_ncu: {e}", file=sys.stderr)
        sys.exit(2)
