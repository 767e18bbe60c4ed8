#!/usr/bin/env python3
"""ctest repo_paths (label cpu): every repository path that README.md, docs/*.md and every
README.md under results/ and tools/ name still resolves, so moving a file cannot leave a reader
with a dead reference.

A path is a token starting with one of the repository's top-level folders (common/, bench/,
kernels/, profiler/, validate/, results/, scripts/, tests/, docs/, examples/, cmake/, tools/, include/),
written in the text (in backticks, a link or plain). It resolves when it names a file or folder
from the repository root, or a public header as it is included (`bench/core/api.h` is
include/crossbench/bench/core/api.h), or, in a results/ or tools/ README, from that README's own
folder (results/h200/X/README.md naming bench/summary.md means results/h200/X/bench/summary.md).
Not checked: tokens holding a placeholder (`*`, `<`, `{`, `...`): patterns, not paths; the
folders commands write into (OUTPUT_DIRS: bench's and bench qualify's default --out, and the
fleet example's); build products (build/...) are not repository paths either.

Usage: test_repo_paths.py REPO_ROOT. Exit 0: every path resolves; 1: the unresolved ones listed
(FILE:LINE: PATH); 2: bad usage.
"""
import os
import re
import sys

TOP = ("common", "bench", "kernels", "profiler", "validate", "results", "scripts", "tests", "docs", "examples", "cmake",
       "tools", "include")
# A path token: a top-level folder, then path characters; not preceded by a path character (so
# build/bench or a/scripts/x.py from a diff are not taken as repository paths).
TOKEN = re.compile(r"(?<![\w./~$-])((?:%s)/[\w.+/@=*<>{}-]*)" % "|".join(TOP))
# Where commands write (results/runs is bench's default --out, results/qualify bench qualify's,
# results/fleet the README's fleet example): named as destinations, not committed files.
OUTPUT_DIRS = ("results/runs", "results/qualify", "results/fleet")
# Files of other projects named by their own path (Google Benchmark's tools/compare.py).
OTHER_PROJECTS = ("tools/compare.py",)
PLACEHOLDER = re.compile(r"[*<>{}]|\.\.\.|/N\b|-N\b|/X\b")


def documents(root):
    yield "README.md"
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md"):
            yield os.path.join("docs", name)
    for top in ("results", "tools"):
        for folder, _, files in sorted(os.walk(os.path.join(root, top))):
            if "README.md" in files:
                yield os.path.relpath(os.path.join(folder, "README.md"), root)


def resolves(root, doc, path):
    path = path.rstrip(".,;:)'\"`/")
    # A line or anchor suffix (file.cpp:42, file.md#section) names a place in the file.
    path = re.sub(r"(:\d+(-\d+)?|#.*)$", "", path)
    if not path or PLACEHOLDER.search(path) or path in OTHER_PROJECTS:
        return True
    if any(path == d or path.startswith(d + "/") for d in OUTPUT_DIRS):
        return True
    bases = [root, os.path.join(root, "include", "crossbench")]
    if doc.startswith(("results", "tools")):
        bases.append(os.path.join(root, os.path.dirname(doc)))
    for base in bases:
        if os.path.exists(os.path.join(base, path)):
            return True
    return False


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: test_repo_paths.py REPO_ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    bad, checked = [], 0
    for doc in documents(root):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for m in TOKEN.finditer(line):
                    checked += 1
                    if not resolves(root, doc, m.group(1)):
                        bad.append(f"{doc}:{number}: {m.group(1)}")
    for line in bad:
        print(line)
    print(f"test_repo_paths: {checked} paths checked, {len(bad)} do not resolve")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
