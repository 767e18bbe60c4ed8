#!/usr/bin/env python3
"""ctest `gbench_compare` (label cpu): the run folder's benchmark.json stays readable by Google
Benchmark's own tools/compare.py.

usage: test_gbench_compare.py REPO_ROOT

compare.py (with its gbench package) comes from Google Benchmark's source as Debian and Ubuntu
package it: libbenchmark-tools (/usr/share/benchmark/compare.py), or from the folder named by
XB_GBENCH_TOOLS. The PyPI sdists of google-benchmark hold only the Python bindings, no tools/
(checked for 1.8.3, 1.9.1 and 1.9.4). compare.py imports scipy and numpy.

For every pair of real benchmark.json files under results/ (only a live GPU run writes one; with a
single file it is compared with itself) `compare.py benchmarks A B` must exit 0 and list every
benchmark of the files; `compare.py filters FILE matmul/ addmm_bias1d/` must compare the two ops
size by size, with the relative time change computed from the files' real_time.

Skipped (exit 77, "SKIPPED: ...") without compare.py or scipy; scripts/test.sh installs
libbenchmark-tools with apt-get and scipy with pip when it can.
"""
import glob
import itertools
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xb_pytest_common as common  # noqa: E402


def find_compare():
    candidates = []
    if os.environ.get("XB_GBENCH_TOOLS"):
        candidates.append(os.path.join(os.environ["XB_GBENCH_TOOLS"], "compare.py"))
    candidates.append("/usr/share/benchmark/compare.py")
    for path in candidates:
        if os.path.isfile(path) and os.path.isdir(os.path.join(os.path.dirname(path), "gbench")):
            return path
    common.skip("Google Benchmark's tools/compare.py was not found (looked at " + ", ".join(candidates) +
                "); install libbenchmark-tools (apt-get install libbenchmark-tools; scripts/test.sh does) "
                "or set XB_GBENCH_TOOLS to a folder holding compare.py and gbench/")


def compare(tool, *args):
    proc = subprocess.run([sys.executable, tool, "--no-color", *args], capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"compare.py {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def body(tmp):
    repo = os.path.abspath(sys.argv[1]) if len(sys.argv) == 2 else None
    if repo is None:
        print("usage: test_gbench_compare.py REPO_ROOT", file=sys.stderr)
        sys.exit(2)
    tool = find_compare()
    common.require_module("numpy", "numpy", "Google Benchmark's compare.py")
    common.require_module("scipy", "scipy", "Google Benchmark's compare.py")
    files = sorted(glob.glob(os.path.join(repo, "results", "**", "benchmark.json"), recursive=True))
    assert files, "no benchmark.json under results/"
    pairs = list(itertools.combinations(files, 2)) or [(files[0], files[0])]
    compared = 0
    for a, b in pairs:
        if compared >= 3:  # each compare.py call takes seconds (scipy); three real pairs suffice
            break
        # compare.py lists the benchmarks the two files share (same name, e.g. the same
        # iteration count in the name); files of other runs may share none.
        names_a = {x["name"] for x in json.load(open(a))["benchmarks"]}
        names_b = {x["name"] for x in json.load(open(b))["benchmarks"]}
        shared = names_a & names_b
        if not shared:
            continue
        compared += 1
        out = compare(tool, "benchmarks", a, b)
        for path in (a,):
            for bench in json.load(open(path))["benchmarks"]:
                if bench["name"] not in shared:
                    continue
                assert bench["name"] in out, (
                    f"compare.py benchmarks {os.path.relpath(a, repo)} {os.path.relpath(b, repo)} does not "
                    f"list {bench['name']}:\n{out}")
        print(f"ok: compare.py benchmarks {os.path.relpath(a, repo)} {os.path.relpath(b, repo)}: "
              f"{len(json.load(open(a))['benchmarks'])} benchmarks listed")

    filtered = 0
    for path in files:
        if filtered >= 2:
            break
        doc = json.load(open(path))
        times = {b["name"]: b["real_time"] for b in doc["benchmarks"] if b.get("run_type") == "iteration"}
        base = {n[len("matmul/"):]: t for n, t in times.items() if n.startswith("matmul/")}
        other = {n[len("addmm_bias1d/"):]: t for n, t in times.items() if n.startswith("addmm_bias1d/")}
        common_names = sorted(set(base) & set(other))
        if not common_names:
            continue
        filtered += 1
        out = compare(tool, "filters", path, "matmul/", "addmm_bias1d/")
        for rest in common_names:
            label = "[matmul/ vs. addmm_bias1d/]" + rest
            line = next((l for l in out.splitlines() if l.startswith(label + " ")), None)
            assert line is not None, f"compare.py filters does not list {rest}:\n{out}"
            change = float(line[len(label):].split()[0])
            expected = (other[rest] - base[rest]) / base[rest]
            assert abs(change - expected) < 6e-5, (
                f"compare.py filters: {rest}: time change {change:+.4f}, the file's real_time gives {expected:+.4f}")
        print(f"ok: compare.py filters {os.path.relpath(path, repo)} matmul/ addmm_bias1d/: "
              f"{len(common_names)} sizes, time changes match real_time")


if __name__ == "__main__":
    common.main(body)
