#!/usr/bin/env python3
"""ctest include_layers (label cpu): the #includes of kernels/, profiler/, validate/, bench/ and
include/crossbench/ keep to the one-way data flow

    kernels -> profiler (records; the front end) -> event model -> exporters -> validate -> bench

A file may include its own layer or a lower one, never a higher one; and no two top-level folders
include each other, directly or through a third (an include cycle). A public header counts as
the folder it is included as (include/crossbench/profiler/table.h is profiler/table.h).

The profiler's layers, by file stem (profiler/<stem>.h and .cpp):
  records    raw records, their JSON file, units, statistics, errors (everything not listed below)
  front end  the CUPTI collector, the NVTX mirror, the counter pass's CUPTI side (FRONT_END)
  model      the event model and the step metrics (MODEL)
  exporters  the table, the trace exporters, the run's output files (EXPORTERS)

Within bench/, the measuring core that a user's benchmark links (crossbench::bench: bench/core/,
bench/cli/, bench/run/, include/crossbench/bench/) includes none of the commands' folders nor the
roof, bench/main/ (COMMANDS: linked into the bench executable alone, bench/CMakeLists.txt), and no command folder
includes another's (commands are leaves; bench/main/, the roof, includes them all).

Usage: test_include_layers.py REPO_ROOT. Exit 0: no violation; 1: each violation listed
(FILE:LINE: what); 2: bad usage.
"""
import os
import re
import sys

FRONT_END = {"profiler", "nvtx_mirror", "cupti_api", "cupti_check", "cupti_collector", "cupti_counters",
             "cupti_sass_metrics", "counters"}
MODEL = {"event_model", "step_metrics", "work_signature"}
EXPORTERS = {"table", "trace_export", "outputs"}
RANK = {"kernels": 0, "profiler/records": 1, "profiler/front end": 2, "profiler/model": 3, "profiler/exporters": 4,
        "validate": 5, "bench": 6}
FOLDERS = ("kernels", "profiler", "validate", "bench")
MEASURING_CORE = ("bench/core/", "bench/cli/", "bench/run/", "include/crossbench/bench/")
COMMANDS = ("bench/sweep/", "bench/qualify/", "bench/compare/", "bench/ab/", "bench/calibrate/", "bench/overhead/", "bench/main/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = (".h", ".cuh", ".cpp", ".cu")


def layer(path):
    """The layer of a repository path or an include name ("profiler/table.h"), or None."""
    path = path.replace(os.sep, "/")
    if path.startswith("include/crossbench/"):
        path = path[len("include/crossbench/"):]
    top = path.split("/", 1)[0]
    if top not in FOLDERS:
        return None
    if top != "profiler":
        return top
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem in FRONT_END:
        return "profiler/front end"
    if stem in MODEL:
        return "profiler/model"
    if stem in EXPORTERS:
        return "profiler/exporters"
    return "profiler/records"


def command_folder(path):
    """The command folder (one of COMMANDS) a repository path or include name is in, or None."""
    path = path.replace(os.sep, "/")
    return next((c for c in COMMANDS if path.startswith(c)), None)


def sources(root):
    for top in FOLDERS + ("include",):
        for folder, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if name.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(folder, name), root)


def cycles(edges):
    """Every cycle of the folder graph, each once, as a list of folders."""
    found = []
    def walk(start, node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                found.append(path + [start])
            elif nxt not in path and nxt > start:  # each cycle from its smallest folder only
                walk(start, nxt, path + [nxt])
    for start in sorted(edges):
        walk(start, start, [start])
    return found


def check(root):
    bad = []
    edges = {}
    where = {}
    for src in sources(root):
        own = layer(src)
        if own is None:
            continue
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                if src.replace(os.sep, "/").startswith(MEASURING_CORE) and m.group(1).startswith(COMMANDS):
                    bad.append(f"{src}:{number}: the measuring core includes {m.group(1)}, a command's")
                mine = command_folder(src)
                theirs = command_folder(m.group(1))
                if mine and theirs and mine != theirs and mine != "bench/main/":
                    bad.append(f"{src}:{number}: the command folder {mine} includes {m.group(1)}, another command's "
                               "(commands are leaves: what two share goes below them, e.g. bench/gate/)")
                other = layer(m.group(1))
                if other is None:
                    continue
                if RANK[other] > RANK[own]:
                    bad.append(f"{src}:{number}: {own} includes {m.group(1)} ({other}), a higher layer")
                a, b = own.split("/")[0], other.split("/")[0]
                if a != b:
                    edges.setdefault(a, set()).add(b)
                    where.setdefault((a, b), f"{src}:{number}")
    for cycle in cycles(edges):
        steps = ", ".join(f"{x} -> {y} ({where[(x, y)]})" for x, y in zip(cycle, cycle[1:]))
        bad.append(f"include cycle between top-level folders: {steps}")
    return bad


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: test_include_layers.py REPO_ROOT", file=sys.stderr)
        return 2
    bad = check(argv[1])
    # The checker itself, on a made-up graph: a cycle and an upward include are found.
    probe = cycles({"kernels": {"profiler"}, "profiler": {"kernels"}})
    if probe != [["kernels", "profiler", "kernels"]]:
        bad.append(f"self-check: cycles() found {probe} in kernels <-> profiler")
    if command_folder("bench/compare/compare.h") != "bench/compare/" or command_folder("bench/gate/gate.h") is not None:
        bad.append("self-check: command_folder() maps paths wrongly")
    if layer("include/crossbench/profiler/table.h") != "profiler/exporters" or layer("tests/x.cpp") is not None:
        bad.append("self-check: layer() maps paths wrongly")
    for line in bad:
        print(line)
    print(f"test_include_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
