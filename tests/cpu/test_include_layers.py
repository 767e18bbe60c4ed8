#!/usr/bin/env python3
"""ctest include_layers (label cpu): the folder tree is the layer graph. Each folder is one layer
(one CMake library), and a file may include only its own layer and the layers below it:

    common                                   errors, units, statistics, JSON, files, console style
    kernels             -> common            CUDA workloads
    profiler/model      -> common            raw records, front end, raw_session.json, event model
    profiler/adapters   -> profiler/model, kernels      CUPTI and NVTX (the only CUDA-needing part)
    profiler/exporters  -> profiler/model    table, traces, output files
    validate            -> common            the validator reads every file with its own readers
    bench               -> validate, profiler/exporters, profiler/adapters, kernels

("->": may include; through a layer below, also what that one may include.) Listed bottom up,
that is common, kernels, profiler/model, profiler/adapters, profiler/exporters, validate, bench;
the graph is stricter than that order: validate includes nothing of the profiler or the kernels,
the exporters nothing of the adapters, the model nothing of the kernels (so that XB_CUDA=OFF
builds common/ and validate/ alone). A public header counts as the folder it is included as
(include/crossbench/profiler/exporters/table.h is profiler/exporters). A source file in profiler/
outside its three sub-folders has no layer and is reported. No two layers include each other,
directly or through others (an include cycle). The CMake libraries keep to the same graph: a
folder's CMakeLists.txt links no xb_ library of a layer not below it (LIBRARY_LAYER).

Within bench/, the measuring core that a user's benchmark links (crossbench::bench: bench/core/,
bench/cli/, bench/run/, include/crossbench/bench/) and the gate the comparing commands share
(bench/gate/) include none of the commands' folders nor the
roof, bench/main/ (COMMANDS: linked into the bench executable alone, bench/CMakeLists.txt), and no command folder
includes another's (commands are leaves; bench/main/, the roof, includes them all).

docs/development.md ("Layout") draws the same graph in a fenced block, one "layer -> lower, ..."
line per layer: the test reads it and reports any difference from LAYERS, so the page stays true.

Usage: test_include_layers.py REPO_ROOT. Exit 0: no violation; 1: each violation listed
(FILE:LINE: what); 2: bad usage.
"""
import os
import re
import sys

# Each layer's folder (a path prefix, also under include/crossbench/) and the layers right below it.
LAYERS = {
    "common": (),
    "kernels": ("common",),
    "profiler/model": ("common",),
    "profiler/adapters": ("profiler/model", "kernels"),
    "profiler/exporters": ("profiler/model",),
    "validate": ("common",),
    "bench": ("validate", "profiler/exporters", "profiler/adapters", "kernels"),
}
FOLDERS = ("common", "kernels", "profiler", "validate", "bench")
MEASURING_CORE = ("bench/core/", "bench/cli/", "bench/run/", "bench/gate/", "include/crossbench/bench/")
COMMANDS = ("bench/sweep/", "bench/qualify/", "bench/compare/", "bench/ab/", "bench/calibrate/", "bench/overhead/", "bench/main/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = (".h", ".cuh", ".cpp", ".cu")


def below(layers=LAYERS):
    """Layer -> every layer it may include (itself and all it reaches through LAYERS)."""
    out = {}
    def reach(name, seen):
        for lower in layers[name]:
            if lower not in seen:
                seen.add(lower)
                reach(lower, seen)
        return seen
    for name in layers:
        out[name] = reach(name, {name})
    return out


MAY_INCLUDE = below()


def layer(path):
    """The layer of a repository path or an include name ("profiler/exporters/table.h"), or
    None (not in a layer's folder: tests/, tools/, or a file directly in profiler/)."""
    path = path.replace(os.sep, "/")
    if path.startswith("include/crossbench/"):
        path = path[len("include/crossbench/"):]
    for name in sorted(LAYERS, key=len, reverse=True):
        if path.startswith(name + "/"):
            return name
    return None


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


# Each folder's CMake library (bench/ has its measuring core and its commands): the link graph
# must be the include graph's, so a CMakeLists.txt in a layer's folder links no xb_ target of a
# layer not below it.
LIBRARY_LAYER = {"xb_common": "common", "xb_kernels": "kernels", "xb_profiler_model": "profiler/model",
                 "xb_profiler_adapters": "profiler/adapters", "xb_profiler_exporters": "profiler/exporters",
                 "xb_validate": "validate"}
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)


def check_links(root):
    bad = []
    for top in FOLDERS:
        for folder, _, files in sorted(os.walk(os.path.join(root, top))):
            if "CMakeLists.txt" not in files:
                continue
            path = os.path.relpath(os.path.join(folder, "CMakeLists.txt"), root)
            own = layer(path)
            if own is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for m in LINK.finditer(text):
                for name in re.findall(r"\bxb_\w+", m.group(2)):
                    other = LIBRARY_LAYER.get(name)
                    if other is not None and other not in MAY_INCLUDE[own]:
                        bad.append(f"{path}: {m.group(1)} ({own}) links {name} ({other}), not a layer below it")
    return bad


def check(root):
    bad = []
    edges = {}
    where = {}
    for src in sources(root):
        own = layer(src)
        if own is None:
            if src.replace(os.sep, "/").startswith(("profiler/", "include/crossbench/profiler/")):
                bad.append(f"{src}: in profiler/ but in none of its layers' folders (model/, adapters/, exporters/)")
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
                if other not in MAY_INCLUDE[own]:
                    bad.append(f"{src}:{number}: {own} includes {m.group(1)} ({other}), not a layer below it")
                if own != other:
                    edges.setdefault(own, set()).add(other)
                    where.setdefault((own, other), f"{src}:{number}")
    for cycle in cycles(edges):
        steps = ", ".join(f"{x} -> {y} ({where[(x, y)]})" for x, y in zip(cycle, cycle[1:]))
        bad.append(f"include cycle between layers: {steps}")
    return bad


def documented_layers(root):
    """The layer graph drawn in docs/development.md's "Layout" section (its first fenced block):
    {layer: (lower, ...)}; {} where the page or the block is missing."""
    try:
        with open(os.path.join(root, "docs", "development.md"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    section = text.split("\n## Layout", 1)[-1] if "\n## Layout" in text else ""
    block = re.search(r"```\n(.*?)```", section, re.S)
    graph = {}
    for line in (block.group(1) if block else "").splitlines():
        line = re.sub(r"\(.*?\)", "", line).strip()  # "(includes no other folder)" and other notes
        if not line:
            continue
        name, _, lower = line.partition("->")
        graph[name.strip()] = tuple(x.strip() for x in lower.split(",") if x.strip())
    return graph


def check_docs(root):
    documented = documented_layers(root)
    if not documented:
        return ["docs/development.md: no layer graph (a fenced block in the Layout section) to check"]
    if documented != LAYERS:
        return [f"docs/development.md draws the layers as {documented}, the test holds {LAYERS}: update one"]
    return []


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: test_include_layers.py REPO_ROOT", file=sys.stderr)
        return 2
    bad = check(argv[1]) + check_links(argv[1]) + check_docs(argv[1])
    # The checker itself, on a made-up graph: a cycle and an upward include are found.
    probe = cycles({"kernels": {"profiler"}, "profiler": {"kernels"}})
    if probe != [["kernels", "profiler", "kernels"]]:
        bad.append(f"self-check: cycles() found {probe} in kernels <-> profiler")
    if (layer("include/crossbench/profiler/exporters/table.h") != "profiler/exporters"
            or layer("profiler/adapters/cupti_api.h") != "profiler/adapters" or layer("common/errors.h") != "common"
            or layer("tests/x.cpp") is not None or layer("profiler/x.cpp") is not None):
        bad.append("self-check: layer() maps paths wrongly")
    if command_folder("bench/compare/compare.h") != "bench/compare/" or command_folder("bench/gate/gate.h") is not None:
        bad.append("self-check: command_folder() maps paths wrongly")
    if cycles({k: set(v) for k, v in LAYERS.items()}):
        bad.append("self-check: the layer graph LAYERS has a cycle")
    if ("profiler/model" in MAY_INCLUDE["validate"] or "common" not in MAY_INCLUDE["bench"]
            or "profiler/adapters" in MAY_INCLUDE["profiler/exporters"]):
        bad.append("self-check: below() reaches the wrong layers")
    for line in bad:
        print(line)
    print(f"test_include_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
