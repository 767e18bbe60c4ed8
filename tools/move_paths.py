#!/usr/bin/env python3
"""The folder moves of issue 38 item 1 (common/, profiler/{model,adapters,exporters}/), as one
re-runnable script: `git mv`s each file still at its old path, then rewrites every mention of an
old path (an #include, a source list, a path in a comment or a doc) and the old CMake target
names to the new ones, in every tracked text file but the recorded evidence (results/, whose
README.md files alone are rewritten: ctest repo_paths resolves the paths they name). Running
it again changes nothing; run it after merging a branch that still uses the old paths.

Usage: python3 tools/move_paths.py [--only GROUP] [--dry-run]   (from the repository root)
GROUP: common, profiler. Exit 0 when done; 2 on bad usage.
A migration tool: delete it once no branch uses the old paths.
"""
import os
import re
import subprocess
import sys

I = "include/crossbench/"
# (group, old path, new path): the include name of a public header is its path under include/crossbench/.
MOVES = [
    ("common", I + "profiler/errors.h", I + "common/errors.h"),
    ("common", I + "profiler/units.h", I + "common/units.h"),
    ("common", "profiler/units.cpp", "common/units.cpp"),
    ("common", I + "profiler/stats.h", I + "common/stats.h"),
    ("common", "profiler/stats.cpp", "common/stats.cpp"),
    ("common", I + "profiler/atomic_file.h", I + "common/atomic_file.h"),
    ("common", "profiler/atomic_file.cpp", "common/atomic_file.cpp"),
    ("common", "profiler/strict_json.h", "common/strict_json.h"),
    ("common", "profiler/strict_json.cpp", "common/strict_json.cpp"),
    ("common", "profiler/json_text.h", "common/json_text.h"),
    ("common", "validate/cli_style.h", "common/cli_style.h"),
    ("common", "validate/cli_style.cpp", "common/cli_style.cpp"),
]
for stem, public in (("raw_records", True), ("session_io", True), ("event_model", True), ("step_metrics", True),
                     ("work_signature", True), ("counters", True), ("profiler", True), ("session_json", False)):
    if public:
        MOVES.append(("profiler", f"{I}profiler/{stem}.h", f"{I}profiler/model/{stem}.h"))
    else:
        MOVES.append(("profiler", f"profiler/{stem}.h", f"profiler/model/{stem}.h"))
for src in ("raw_records", "session_io", "session_write", "event_model", "step_metrics", "work_signature", "counters",
            "profiler"):
    MOVES.append(("profiler", f"profiler/{src}.cpp", f"profiler/model/{src}.cpp"))
for stem in ("table", "trace_export", "outputs"):
    MOVES.append(("profiler", f"{I}profiler/{stem}.h", f"{I}profiler/exporters/{stem}.h"))
    MOVES.append(("profiler", f"profiler/{stem}.cpp", f"profiler/exporters/{stem}.cpp"))
MOVES.append(("profiler", f"{I}profiler/nvtx_mirror.h", f"{I}profiler/adapters/nvtx_mirror.h"))
for name in ("cupti_api.h", "cupti_check.h", "cupti_sass_metrics.h", "cupti_collector.cpp", "cupti_counters.cpp",
             "cupti_sass_metrics.cpp", "nvtx_mirror.cpp"):
    MOVES.append(("profiler", f"profiler/{name}", f"profiler/adapters/{name}"))

# CMake targets renamed (in CMakeLists.txt and *.cmake only): the library of each folder.
TARGETS = [("common", "xb_cli_style", "xb_common"), ("common", "xb_validate_cli", "xb_validate"),
           ("profiler", "xb_model", "xb_profiler_exporters"), ("profiler", "xb_cupti", "xb_profiler_adapters")]
SKIP_PREFIXES = ("results/",)
SELF = "tools/move_paths.py"


def name_of(path):
    """How the repository names a file: a public header by its include name, else its path."""
    return path[len(I):] if path.startswith(I) else path


def rewrites(moves):
    out = []
    for _, old, new in moves:
        a, b = name_of(old), name_of(new)
        # Not preceded by a word character, '.' or '-' ('/' is fine: include/crossbench/..., ${ROOT}/...).
        out.append((re.compile(r"(?<![\w.-])" + re.escape(a) + r"(?![\w])"), b))
    return out


def main(argv):
    groups = {"common", "profiler"}
    dry = "--dry-run" in argv
    if "--only" in argv:
        i = argv.index("--only")
        if i + 1 >= len(argv) or argv[i + 1] not in groups:
            print(__doc__, file=sys.stderr)
            return 2
        groups = {argv[i + 1]}
    moves = [m for m in MOVES if m[0] in groups]
    for _, old, new in moves:
        if os.path.exists(old) and not os.path.exists(new):
            print(f"git mv {old} {new}")
            if not dry:
                os.makedirs(os.path.dirname(new), exist_ok=True)
                subprocess.run(["git", "mv", old, new], check=True)
    subs = rewrites(moves)
    files = subprocess.run(["git", "ls-files"], check=True, capture_output=True, text=True).stdout.split("\n")
    for path in files:
        readme = os.path.basename(path) == "README.md"  # ctest repo_paths resolves the results/ READMEs' paths
        if not path or (path.startswith(SKIP_PREFIXES) and not readme) or path == SELF or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        new_text = text
        for pattern, repl in subs:
            new_text = pattern.sub(repl, new_text)
        base = os.path.basename(path)
        if base == "CMakeLists.txt" or base.endswith(".cmake") or base.endswith(".cmake.in"):
            for group, old, new in TARGETS:
                if group in groups:
                    new_text = re.sub(r"\b" + old + r"\b", new, new_text)
        if new_text != text:
            print(f"rewrote {path}")
            if not dry:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new_text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
