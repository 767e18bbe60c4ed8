#!/usr/bin/env python3
"""Issue 4's evidence tables from bench run folders (events.json + validation.json).

  timing_report.py --hot-on DIR --hot-off DIR [--cold-on DIR] [--cold-off DIR]
                   [--repeat DIR DIR] [--nowarm DIR DIR] > report.md

Prints markdown: event vs CUPTI per fixture with the blocking kernel on and off (per call, the
median over recorded steps of |event - CUPTI span|, against max(0.5 us, 1%)); cold vs hot
medians with cold-mode bytes/s against the measured copy bandwidth; agreement of back-to-back
runs. Exit status 1 when a target is missed (the tables say which), 2 on unusable input.
"""
import argparse
import json
import os
import re
import sys


def load(run):
    try:
        with open(os.path.join(run, "events.json")) as f:
            events = json.load(f)
        with open(os.path.join(run, "validation.json")) as f:
            validation = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"timing_report: error: {run}: {e}")
    fixtures = {f["name"]: f for f in events["fixtures"]}
    figs = {}
    for fig in (validation.get("figures", {}).get("event_vs_cupti") or []):
        if isinstance(fig, dict) and "fixture" in fig:
            figs[fig["fixture"]] = fig
    verdicts = {}
    for r in validation.get("checks", []):
        if r.get("check") == "event_vs_cupti" and r.get("subject"):
            verdicts[r["subject"]] = r.get("status")
    return fixtures, figs, verdicts


def us(ns):
    return "-" if ns is None else f"{ns / 1e3:.3f}"


def order_key(name):
    op, dtype, n = name.split("/")[:3]
    ops = ["matmul", "add", "addmm", "addmm_bias1d"]
    return (ops.index(op) if op in ops else 9, dtype, int(n))


def event_table(on, off):
    missed = []
    fx_on, fig_on, v_on = on
    fx_off, fig_off, v_off = off
    print("| fixture | launches/step | event/call us | CUPTI/call us | median abs(event-CUPTI) us | tolerance us | blocking on | "
          "no blocking: abs diff us | no blocking: verdict |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    for name in sorted(fx_on, key=order_key):
        a = fig_on.get(name)
        b = fig_off.get(name)
        if a is None:
            print(f"| {name} | - | - | - | - | - | {v_on.get(name, 'not run')} | - | - |")
            missed.append(f"{name}: no event_vs_cupti figure (blocking on)")
            continue
        ok = a["abs_diff_median_ns"] <= a["tolerance_ns"]
        if not ok:
            missed.append(f"{name}: median |event - CUPTI| {a['abs_diff_median_ns']:.0f} ns > {a['tolerance_ns']:.0f} ns")
        print(f"| {name} | {a['launches_per_step']} | {us(a['event_median_ns'])} | {us(a['cupti_median_ns'])} | "
              f"{us(a['abs_diff_median_ns'])} | {us(a['tolerance_ns'])} | {v_on.get(name)} | "
              f"{us(b['abs_diff_median_ns']) if b else '-'} | {v_off.get(name, '-') if b else '-'} |")
    return missed


def cold_hot_table(hot, cold, l2_bytes, copy_gbps):
    missed = []
    fx_hot, _, _ = hot
    fx_cold, _, _ = cold
    print("| fixture | bytes/call MB | hot median us | cold median us | cold/hot | cold GB/s | rotation | check |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in sorted(fx_cold, key=order_key):
        c = fx_cold[name]
        h = fx_hot.get(name)
        if "stats" not in c or h is None or "stats" not in h:
            print(f"| {name} | - | - | - | - | - | - | {c.get('error', 'no samples')} |")
            continue
        cm, hm = c["stats"]["median_ns"], h["stats"]["median_ns"]
        gbps = c["bytes"] / cm
        notes = []
        if l2_bytes and c["bytes"] < l2_bytes and cm < hm:
            notes.append("cold < hot")
            missed.append(f"{name}: cold {cm:.0f} ns < hot {hm:.0f} ns for a working set under L2")
        if copy_gbps and gbps > copy_gbps:
            notes.append("above copy bandwidth")
            missed.append(f"{name}: cold {gbps:.0f} GB/s > copy {copy_gbps:.0f} GB/s")
        print(f"| {name} | {c['bytes'] / 1e6:.3f} | {us(hm)} | {us(cm)} | {cm / hm:.3f} | {gbps:.0f} | "
              f"{c['timing']['rotation']} | {', '.join(notes) or 'ok'} |")
    return missed


def repeat_table(a, b, label, limit=0.02):
    missed = []
    print(f"| fixture | run 1 median us | run 2 median us | difference | run 1 cold start | run 2 cold start |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for name in sorted(a[0], key=order_key):
        x, y = a[0][name], b[0].get(name)
        if y is None or "stats" not in x or "stats" not in y:
            continue
        m1, m2 = x["stats"]["median_ns"], y["stats"]["median_ns"]
        d = abs(m1 - m2) / min(m1, m2)
        if label == "warm" and d > limit:
            missed.append(f"{name}: back-to-back runs differ by {d * 100:.2f}% (> {limit * 100:.0f}%)")
        print(f"| {name} | {us(m1)} | {us(m2)} | {d * 100:.2f}% | {x['timing']['cold_start']} "
              f"({x['timing']['early_slowdown'] * 100:+.1f}%) | {y['timing']['cold_start']} "
              f"({y['timing']['early_slowdown'] * 100:+.1f}%) |")
    return missed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hot-on", required=True)
    p.add_argument("--hot-off", required=True)
    p.add_argument("--cold-on")
    p.add_argument("--cold-off")
    p.add_argument("--repeat", nargs=2)
    p.add_argument("--nowarm", nargs=2)
    p.add_argument("--l2-mib", type=float, default=0)
    p.add_argument("--copy-gbps", type=float, default=0)
    a = p.parse_args()
    missed = []
    hot_on, hot_off = load(a.hot_on), load(a.hot_off)
    print("## Event vs CUPTI, hot mode, blocking kernel on vs off\n")
    missed += event_table(hot_on, hot_off)
    if a.cold_on and a.cold_off:
        print("\n## Event vs CUPTI, cold mode (one launch per sample), blocking kernel on vs off\n")
        event_table(load(a.cold_on), load(a.cold_off))  # reported, not a target: see docs/metrics.md
    if a.cold_on:
        print("\n## Cold vs hot (blocking on)\n")
        missed += cold_hot_table(hot_on, load(a.cold_on), int(a.l2_mib * 2**20), a.copy_gbps)
    if a.repeat:
        print("\n## Two back-to-back runs with --warmup\n")
        missed += repeat_table(load(a.repeat[0]), load(a.repeat[1]), "warm")
    if a.nowarm:
        print("\n## Two back-to-back runs without --warmup\n")
        repeat_table(load(a.nowarm[0]), load(a.nowarm[1]), "cold")
    print("\n## Targets\n")
    if missed:
        for m in missed:
            print(f"- MISSED: {m}")
    else:
        print("- all met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
