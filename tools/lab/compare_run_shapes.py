#!/usr/bin/env python3
"""Issue 38's "behaviour unchanged" check: two folders written by two builds of crossbench (before
and after a refactor) from the same command hold the same files with the same content wherever
timing does not enter.

usage: compare_run_shapes.py OLD NEW [--report FILE]

Every file under OLD is compared with NEW's file of the same relative path:
- JSON (.json, .json.gz not read): the same structure (keys, array lengths, value types) and the
  same strings and booleans; numbers are compared only where they are counts or settings that
  timing cannot move (integers under keys in EXACT_INT_KEYS), other numbers are timing and skipped;
  "created_utc", paths and the UUID-like run names are masked.
- text (.md, .txt, .csv, .xml): the same lines, in any order (a table's rows follow their times),
  once every number and path is masked.
- flags and words that follow the timing (TIMING_KEYS: throttled, noisy, the stop reason, a
  verdict's text, ...) are compared by type only, and arrays of named rows in name order.
- other files (.png and the like): present on both sides.
A file on one side only is a difference. Timing decides how many samples a fixture takes, so
arrays under "samples_ns" (and per-sample arrays beside it) may differ in length.
Exit 0: no difference; 1: differences (each listed, and in --report as JSON); 2: bad usage.
"""
import json
import os
import re
import sys

MASKED_KEYS = {"created_utc", "run_dir", "inputs", "command", "pid", "hostname", "out"}
PER_SAMPLE = {"samples_ns", "sample_sm_clock_mhz"}
# Flags and words that follow the timing (a power cap, the noise target, the row order of a table
# sorted by time): compared for presence and type only.
TIMING_KEYS = {"throttled", "noisy", "stop", "claimed", "cold_start", "warmed_up", "precision_met", "status", "verdict",
               "summary", "message", "found", "reason"}
EXACT_INT_KEYS = {"rotation", "min_samples", "size", "n", "count_expected", "version"}
NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")
PATHS = re.compile(r"(/[\w.\-]+)+")


def mask_text(line):
    return NUMBER.sub("#", PATHS.sub("PATH", line))


def compare_json(a, b, where, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in MASKED_KEYS:
                continue
            if k not in a or k not in b:
                out.append(f"{where}/{k}: only in {'new' if k in b else 'old'}")
                continue
            if k in TIMING_KEYS:
                if type(a[k]) is not type(b[k]) and None not in (a[k], b[k]):
                    out.append(f"{where}/{k}: {type(a[k]).__name__} before, {type(b[k]).__name__} after")
                continue
            if k in PER_SAMPLE:
                if not (isinstance(a[k], list) and isinstance(b[k], list)):
                    out.append(f"{where}/{k}: not an array on both sides")
                continue
            compare_json(a[k], b[k], f"{where}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} entries before, {len(b)} after")
            return
        # Rows sorted by a time (a table's) are compared in name order.
        if all(isinstance(x, dict) and "name" in x for x in a + b):
            a = sorted(a, key=lambda x: json.dumps(x.get("name")) + json.dumps(x.get("kind", "")))
            b = sorted(b, key=lambda x: json.dumps(x.get("name")) + json.dumps(x.get("kind", "")))
        for i, (x, y) in enumerate(zip(a, b)):
            compare_json(x, y, f"{where}[{i}]", out)
    elif isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        if type(a) is not type(b):
            out.append(f"{where}: {type(a).__name__} before, {type(b).__name__} after")
        elif isinstance(a, str) and mask_text(a) != mask_text(b):
            out.append(f"{where}: {a[:80]!r} before, {b[:80]!r} after")
        elif isinstance(a, bool) and a != b:
            out.append(f"{where}: {a} before, {b} after")
    elif a is None or b is None:
        if (a is None) != (b is None) and not where.endswith(tuple(PER_SAMPLE)):
            out.append(f"{where}: {a!r} before, {b!r} after")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        key = where.rsplit("/", 1)[-1]
        if key in EXACT_INT_KEYS and a != b:
            out.append(f"{where}: {a} before, {b} after")
    else:
        out.append(f"{where}: {type(a).__name__} before, {type(b).__name__} after")


def compare_files(old, new):
    found = []
    names = set()
    for root in (old, new):
        for folder, _, files in os.walk(root):
            for f in files:
                names.add(os.path.relpath(os.path.join(folder, f), root))
    for rel in sorted(names):
        a, b = os.path.join(old, rel), os.path.join(new, rel)
        if not os.path.exists(a) or not os.path.exists(b):
            found.append(f"{rel}: only in {'new' if os.path.exists(b) else 'old'}")
            continue
        diffs = []
        if rel.endswith(".json"):
            try:
                with open(a) as fa, open(b) as fb:
                    compare_json(json.load(fa), json.load(fb), "", diffs)
            except ValueError as e:
                diffs.append(f"not JSON: {e}")
        elif rel.endswith((".md", ".txt", ".csv", ".xml")):
            with open(a, errors="replace") as fa, open(b, errors="replace") as fb:
                # Sorted: a table's rows follow their times.
                la = sorted(mask_text(x) for x in fa.read().splitlines())
                lb = sorted(mask_text(x) for x in fb.read().splitlines())
            if la != lb:
                first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                diffs.append(f"line {first + 1} differs (of {len(la)} before, {len(lb)} after)")
        found += [f"{rel}: {d}" for d in diffs[:20]]
    return found


def main(argv):
    args = argv[1:]
    report = None
    if "--report" in args:
        i = args.index("--report")
        if i + 1 >= len(args):
            print("compare_run_shapes.py: error: --report needs a FILE", file=sys.stderr)
            return 2
        report = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2 or not all(os.path.isdir(d) for d in args):
        print("usage: compare_run_shapes.py OLD NEW [--report FILE] (two folders)", file=sys.stderr)
        return 2
    found = compare_files(*args)
    for line in found:
        print(line)
    print(f"compare_run_shapes: {args[0]} vs {args[1]}: {len(found)} difference(s) where timing does not enter")
    if report:
        with open(report, "w") as f:
            json.dump({"old": args[0], "new": args[1], "differences": found}, f, indent=1)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
