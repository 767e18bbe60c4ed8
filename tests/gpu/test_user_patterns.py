#!/usr/bin/env python3
"""The corpus of user code (examples/user_patterns, issue 36 item 6) against its expected outcomes
(ctest user_patterns, label gpu; tools/lab/h200_user_patterns.sh runs it with --all on the H200).

1. expected.json is current with patterns.json (generate_expected.py --check);
2. the build is installed into a prefix of the test's own and examples/user_patterns built against
   it (find_package(crossbench)): user_patterns and user_patterns_ptds, whose --list-patterns must
   be the table's;
3. every selected C++ case runs as its own process: `<program> --op <pattern> --size S --mode hot|cold`
   or `--graph`, `--min-time 0.1 --max-time 0.5`, no --warmup, `--out` a folder of its own; the
   mixed runs hold several patterns in one process;
4. the Python cases run through examples/user_patterns/patterns.py (crossbench.bench) when
   crossbench's module and torch import, fault and hang each in a process of their own;
5. each outcome (exit code, stderr lines, validation.json, events.json; Python: the exception or the
   Result) is compared with expected.json, and a table is written: OUT/user_patterns.md and .json
   (pattern, mode, language, expected, got, exit code, the refusal or verdict line, PASS or MISMATCH).

Usage: test_user_patterns.py --build-dir BUILD [--all] [--sizes 64,4096] [--patterns a,b] [--modes hot,graph]
           [--language cpp|python] [--python-dir DIR] [--python EXE] [--require-python] [--work DIR] [--out DIR]
           [--examples-build DIR] [--hang-limit-s 5] [--min-time 0.1] [--max-time 0.5] [--cmake EXE]
           [--generator G] [--cmake-arg ARG]...
       test_user_patterns.py --self-test      (no GPU: the table is current, the judging on synthetic runs)
Default: the quick subset (expected.json "quick", size 64). Exit 0 every case as expected, 1 a
mismatch (or a build failure), 2 bad usage, 77 skipped ("SKIPPED: no CUDA device ...").
"""
import argparse
import ctypes
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "user_patterns")
PROGRAMS = ("user_patterns", "user_patterns_ptds")


def gpu_reason():
    """Why no CUDA device can be used ("" when one can), from the driver API alone."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA device (no NVIDIA driver: libcuda.so.1 does not load)"
    rc = cuda.cuInit(0)
    if rc != 0:
        return f"no CUDA device (cuInit: CUresult {rc})"
    count = ctypes.c_int(0)
    rc = cuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value == 0:
        return f"no CUDA device (cuDeviceGetCount: CUresult {rc}, {count.value} devices)"
    return ""


def load_generator():
    spec = importlib.util.spec_from_file_location("generate_expected", os.path.join(EXAMPLE, "generate_expected.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fixture(pattern, n):
    return f"{pattern}/fp32/{n}"


# ---- reading a C++ run ------------------------------------------------------------------------


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def starts(line, start, program):
    """`line` starts with `start` (written with bench's name, as the contract words it), or with the
    same under the program's own name (a user's program names itself in its device-failure line)."""
    if line.startswith(start):
        return True
    return start.startswith("bench: ") and line.startswith(f"{program}: {start[len('bench: '):]}")


def failed_checks(validation, fx, check=None):
    """validation.json's failed results that name fixture fx (in subject or message)."""
    out = []
    for c in (validation or {}).get("checks", []):
        if c.get("status") == "failed" and (check is None or c.get("check") == check):
            if fx in str(c.get("subject", "")) or fx in str(c.get("message", "")):
                out.append(c)
    return out


def passed_checks(validation, fx):
    return [c for c in (validation or {}).get("checks", []) if c.get("status") == "passed" and c.get("subject") == fx]


def event_fixtures(events):
    return {f.get("name"): f for f in (events or {}).get("fixtures", [])}


def classify_cpp(mode, rc, stderr, validation):
    """What a run did, in expected.json's words, and the line that shows it."""
    lines = stderr.splitlines()
    for key, test in (("fault", lambda s: ": device fault: " in s),
                      ("hang", lambda s: ": a call did not finish within" in s),
                      ("refused_graph", lambda s: ": fixture failed: " in s and ": refused in graph mode:" in s),
                      ("refused", lambda s: ": fixture failed: " in s and ": refused: " in s)):
        hit = [s for s in lines if test(s)]
        if hit:
            return key, hit[0]
    if rc in (1, 2) and mode == "graph":
        hit = [s for s in lines if "graph" in s.lower()]
        if hit:
            return "uncapturable", hit[0]
    verdict = (validation or {}).get("verdict", "")
    if rc == 0 and verdict.startswith("PASSED"):
        return "pass", verdict
    failed = [s for s in lines if ": fixture failed: " in s]
    if failed:
        return "fixture failed", failed[0]
    if verdict:
        return "validation " + verdict.split(":")[0].lower(), verdict
    return f"exit {rc}", (lines[-1] if lines else "")


def judge_cpp(case, sizes, rc, stderr, run_dir):
    """(got, line, problems): problems empty when the run is what expected.json says."""
    validation = load_json(os.path.join(run_dir, "validation.json"))
    events = load_json(os.path.join(run_dir, "events.json"))
    got, line = classify_cpp(case["mode"], rc, stderr, validation)
    problems = []
    expected = case["expected"]
    if rc not in case["exit_codes"]:
        problems.append(f"exit {rc}, expected {' or '.join(map(str, case['exit_codes']))}")
    if "ops" in case:
        return got, line, problems + judge_mixed(case, sizes, stderr, validation, events)
    lines = stderr.splitlines()
    fxs = [fixture(case["pattern"], n) for n in sizes]
    rec = case["recognise"]
    if expected == "pass":
        if got != "pass":
            problems.append(f"not passed: {line[:160]}")
        if case.get("sync"):
            ev = event_fixtures(events)
            for fx in fxs:
                sync = ev.get(fx, {}).get("timing", {}).get("sync", "")
                if sync != case["sync"]:
                    problems.append(f"{fx}: events.json timing.sync {sync!r}, expected {case['sync']!r}")
    elif expected == "uncapturable":
        if got != "uncapturable" and not (got == "refused_graph" and "graph" in line):
            problems.append(f"no one-line graph refusal: {line[:160]}")
    else:
        targets = fxs if rec["fixtures"] == "each" else fxs[:1]
        for fx in targets:
            start = rec["line"].format(fixture=fx)
            hit = [s for s in lines if starts(s, start, case["program"])]
            if not hit:
                problems.append(f"no stderr line starting {start!r}")
                continue
            missing = [w for w in rec.get("contains", []) if w not in hit[0]]
            if missing:
                problems.append(f"{fx}: the line lacks {', '.join(repr(w) for w in missing)}: {hit[0][:200]}")
            if rec.get("validation"):
                if validation is None:
                    problems.append(f"{fx}: no validation.json in {run_dir}")
                elif not failed_checks(validation, fx, rec["validation"]["check"]):
                    problems.append(f"{fx}: validation.json has no failed {rec['validation']['check']} check for it")
        if expected == "fault":
            problems += fault_noise(lines)
    return got, line, problems


def fault_noise(lines):
    """After a device fault: exactly one line names it, and no other line blames a fixture or
    reports a CUDA error (follow-on errors, destructor noise)."""
    problems = []
    n = sum(1 for s in lines if "device fault" in s)
    if n != 1:
        problems.append(f"{n} stderr lines mention the device fault (expected one)")
    noise = [s for s in lines if "device fault" not in s and
             (": fixture failed: " in s or "cudaError" in s or "illegal memory access" in s)]
    if noise:
        problems.append(f"{len(noise)} follow-on error line(s): {noise[0][:160]}")
    return problems


def judge_mixed(case, sizes, stderr, validation, events):
    """The mixed runs: the completed fixtures written and validated, the others as expected."""
    problems = []
    lines = stderr.splitlines()
    ev = event_fixtures(events)
    if events is None or validation is None:
        return ["no events.json or validation.json: the completed fixtures were not written"]
    for op in case["completed"]:
        for n in sizes:
            fx = fixture(op, n)
            f = ev.get(fx)
            if f is None or f.get("error"):
                problems.append(f"{fx}: not in events.json or failed ({(f or {}).get('error', 'missing')})")
            if failed_checks(validation, fx):
                problems.append(f"{fx}: validation.json has failed checks for it: "
                                f"{', '.join(c['check'] for c in failed_checks(validation, fx))}")
            if not passed_checks(validation, fx):
                problems.append(f"{fx}: no passed check names it in validation.json (not validated)")
            blamed = [s for s in lines if f": fixture failed: {fx}:" in s or starts(s, f"bench: {fx}:", case["program"])]
            if blamed:
                problems.append(f"{fx}: an error is blamed on it: {blamed[0][:160]}")
    if case.get("faults"):
        fx = fixture(case["faults"], sizes[0])
        start = case["recognise"]["line"].format(fixture=fx)
        if not any(starts(s, start, case["program"]) for s in lines):
            problems.append(f"no stderr line starting {start!r}")
        problems += fault_noise(lines)
        for op in case["not_run"]:
            for n in sizes:
                f = ev.get(fixture(op, n))
                if f is not None and not f.get("error"):
                    problems.append(f"{fixture(op, n)} ran after the fault")
    if case.get("refused"):
        for n in sizes:
            fx = fixture(case["refused"], n)
            start = case["recognise"]["line"].format(fixture=fx)
            hit = [s for s in lines if starts(s, start, case["program"])]
            if not hit:
                problems.append(f"no stderr line starting {start!r}")
            elif any(w not in hit[0] for w in case["recognise"]["contains"]):
                problems.append(f"{fx}: the line lacks {case['where']!r} or {case['why']!r}: {hit[0][:200]}")
            if not failed_checks(validation, fx, "work_signature"):
                problems.append(f"{fx}: validation.json has no failed work_signature check for it")
        verdict = validation.get("verdict", "")
        # validate/report.cpp cause_label(work_signature): the words the verdict names the cause in.
        if "cudaEvents cannot see" not in verdict:
            problems.append(f"the verdict does not name the work_signature cause: {verdict[:160]}")
    return problems


# ---- reading a Python run ---------------------------------------------------------------------


def classify_py(rec):
    if rec["kind"] == "skipped":
        return "skipped", rec.get("reason", "")
    if rec["kind"] == "result":
        return ("pass" if rec.get("passed") else "validation failed"), rec.get("verdict", "")
    text = rec.get("text", "")
    first = text.splitlines()[0] if text else ""
    for key, needle in (("fault", "device fault: cudaError"), ("hang", "a call did not finish within"),
                        ("refused_graph", "refused in graph mode:"), ("refused", "refused: ")):
        if needle in text:
            return key, first
    return f"raised {rec.get('type')}", first


def judge_py(case, recs):
    """(got, line, problems, skipped_reason)."""
    if not recs:
        return "not run", "", ["no result (the Python process ended early: see its log)"], ""
    got, line = classify_py(recs[0])
    if got == "skipped":
        return got, line, [], line
    problems = []
    expected = case["expected"]
    if expected in ("fault", "hang"):
        recs = recs[:1]  # the process stops after the first: the context may be lost
    for rec in recs:
        g, l = classify_py(rec)
        fx = rec["fixture"]
        if g != expected:
            problems.append(f"{fx}: got {g}: {l[:160]}")
            continue
        if expected == "pass":
            if case.get("sync") and rec.get("sync") != case["sync"]:
                problems.append(f"{fx}: Result.sync {rec.get('sync')!r}, expected {case['sync']!r}")
            continue
        text = rec.get("text", "")
        if rec.get("type") != case.get("raises"):
            problems.append(f"{fx}: raised {rec.get('type')}, expected {case.get('raises')}")
        missing = [w for w in case["error_contains"] + [fx] if w and w not in text]
        if missing:
            problems.append(f"{fx}: the error lacks {', '.join(repr(w) for w in missing)}: {text[:200]}")
        if expected == "refused":
            m = re.search(r"\(run folder ([^)]+)\)", text)
            folder = m.group(1) if m else rec.get("out")
            validation = load_json(os.path.join(folder, "validation.json")) if folder else None
            if validation is None:
                problems.append(f"{fx}: no validation.json in the run folder ({folder})")
            elif not failed_checks(validation, fx, "work_signature"):
                problems.append(f"{fx}: validation.json has no failed work_signature check for it")
    return got, line, problems, ""


# ---- building and running ---------------------------------------------------------------------


def text(b):
    """A TimeoutExpired's captured output as text (bytes even with text=True)."""
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


def sh(cmd, log, **kw):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw).returncode


def build_examples(a, work):
    """The programs' folder: the build installed into work/prefix, examples/user_patterns built there."""
    if a.examples_build:
        return a.examples_build
    log = os.path.join(work, "build.log")
    prefix, bdir = os.path.join(work, "prefix"), os.path.join(work, "build")
    if sh([a.cmake, "--install", a.build_dir, "--prefix", prefix], log) != 0:
        raise RuntimeError(f"cmake --install {a.build_dir} failed (see {log})")
    gen = a.generator or ("Ninja" if shutil.which("ninja") else None)
    cfg = [a.cmake, "-S", EXAMPLE, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"]
    if gen and not os.path.exists(os.path.join(bdir, "CMakeCache.txt")):
        cfg += ["-G", gen]
    if sh(cfg + list(a.cmake_arg), log) != 0:
        raise RuntimeError(f"configuring examples/user_patterns failed (see {log})")
    if sh([a.cmake, "--build", bdir, "-j", str(a.jobs)], log) != 0:
        raise RuntimeError(f"building examples/user_patterns failed (see {log})")
    return bdir


def check_lists(bdir, expected):
    """Each program registers exactly the table's patterns for it (hang only with its variable)."""
    problems = []
    for program in PROGRAMS:
        want = [c["pattern"] for c in expected["cases"]
                if c.get("program") == program and c["mode"] == expected["modes"]["cpp"][0]]
        env = dict(os.environ)
        for c in expected["cases"]:
            env.update(c.get("env") or {})
        r = subprocess.run([os.path.join(bdir, program), "--list-patterns"], capture_output=True, text=True, env=env)
        got = (json.loads(r.stdout) if r.returncode == 0 else {}).get("patterns", [])
        if got != want:
            problems.append(f"{program} --list-patterns: {got} (the table: {want}); rebuild it")
    return problems


def hang_env(a):
    """The wait deadline for a hang case: XB_WAIT_DEADLINE_S (bench/core/device_failure.h)."""
    return {"XB_WAIT_DEADLINE_S": str(a.hang_limit_s)}


def run_cpp(a, case, bdir, sizes, runs, logs):
    run_dir = os.path.join(runs, case["id"].replace("/", "_"))
    shutil.rmtree(run_dir, ignore_errors=True)
    cmd = [os.path.join(bdir, case["program"])] + case["args"] + [
        "--size", ",".join(map(str, sizes)), "--out", run_dir, "--min-time", str(a.min_time), "--max-time", str(a.max_time)]
    env = dict(os.environ)
    env.update(case.get("env") or {})
    if case["expected"] == "hang":
        env.update(hang_env(a))
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout_s)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, text(e.stdout), text(e.stderr) + f"\n(killed after {a.timeout_s} s)"
    secs = time.time() - t0
    with open(os.path.join(logs, case["id"].replace("/", "_") + ".log"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nexit {rc} after {secs:.1f} s\n--- stdout\n{out}\n--- stderr\n{err}\n")
    got, line, problems = judge_cpp(case, sizes, rc, err, run_dir)
    return {"rc": rc, "got": got, "line": line, "problems": problems, "seconds": round(secs, 1), "run_dir": run_dir}


def python_usable(a):
    """'' when crossbench (from --python-dir) and torch with a GPU import, else why not."""
    env = dict(os.environ)
    if a.python_dir:
        env["PYTHONPATH"] = a.python_dir + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([a.python, "-c", "import torch, crossbench; assert torch.cuda.is_available(), 'torch sees no GPU'; "
                        "e = crossbench.device_error(); assert not e, e"], capture_output=True, text=True, env=env)
    return "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1], env


def over_budget(a, t0):
    return a.budget_s is not None and time.time() - t0 > a.budget_s


def run_python(a, cases, sizes, runs, logs, t0):
    """{case id: (records, seconds)}: the non-isolated cases in one process, each isolated one alone."""
    why, env = python_usable(a)
    if why:
        return None, why
    groups = [[c for c in cases if not c["isolated"]]] + [[c] for c in cases if c["isolated"]]
    results = {}
    for group in groups:
        if not group or over_budget(a, t0):
            continue  # over the budget: its cases have no records (NOT RUN)
        tag = "python" if len(group) > 1 or not group[0]["isolated"] else group[0]["id"].replace("/", "_")
        cases_file = os.path.join(runs, tag + "_cases.json")
        results_file = os.path.join(runs, tag + "_results.json")
        with open(cases_file, "w") as f:
            json.dump(group, f)
        genv = dict(env)
        if any(c["expected"] == "hang" for c in group):
            genv.update(hang_env(a))
        cmd = [a.python, "-u", os.path.join(EXAMPLE, "patterns.py"), "--cases", cases_file, "--results", results_file,
               "--out", os.path.join(runs, tag), "--sizes", ",".join(map(str, sizes)),
               "--min-time", str(a.min_time), "--max-time", str(a.max_time)]
        t0 = time.time()
        limit = a.timeout_s * max(1, len(group) * len(sizes))
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=genv, timeout=limit)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = 124, text(e.stdout), text(e.stderr) + f"\n(killed after {limit} s)"
        secs = time.time() - t0
        with open(os.path.join(logs, tag + ".log"), "w") as f:
            f.write(f"$ {' '.join(cmd)}\nexit {rc} after {secs:.1f} s\n--- stdout\n{out}\n--- stderr\n{err}\n")
        records = load_json(results_file) or []
        for c in group:
            mine = [r for r in records if r["id"] == c["id"]]
            results[c["id"]] = (mine, secs if len(group) == 1 else None, rc)
    return results, ""


# ---- the report -------------------------------------------------------------------------------


def expected_text(case):
    e = case["expected"]
    if e == "refused":
        return f"refused ({case['where']}, {case['why']})"
    if e == "pass" and case.get("sync"):
        return f"pass (sync {case['sync']})"
    return e


def write_report(rows, out, meta):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "user_patterns.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    lines = [f"# examples/user_patterns: {meta['summary']}", "",
             f"{meta['when']}, commit {meta['commit']}, sizes {meta['sizes']}, {meta['selection']}; "
             f"{meta['seconds']:.0f} s", "",
             "| pattern | mode | language | expected | got | exit | refusal / verdict line | result |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        result = r["result"] + (f": {'; '.join(r['problems'])}" if r["problems"] else "") + \
            (f" ({r['reason']})" if r.get("reason") else "")
        lines.append(f"| `{r['pattern']}` | {r['mode']} | {r['language']} | {esc(r['expected'])} | {esc(r['got'])} | "
                     f"{r['exit'] if r['exit'] is not None else '-'} | {esc(r['line'])[:220]} | {esc(result)} |")
    with open(os.path.join(out, "user_patterns.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return "\n".join(lines)


# ---- main -------------------------------------------------------------------------------------


def select(expected, a):
    cases = expected["cases"] + expected["mixed"]
    if not a.all:
        cases = [c for c in cases if c.get("quick")]
    if a.patterns:
        want = set(a.patterns.split(","))
        cases = [c for c in cases if c["pattern"] in want]
    if a.modes:
        cases = [c for c in cases if c["mode"] in a.modes.split(",")]
    if a.language:
        cases = [c for c in cases if c["language"] == a.language]
    return cases


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", help="crossbench's build folder (installed into WORK/prefix)")
    ap.add_argument("--examples-build", help="examples/user_patterns already built here (no install, no build)")
    ap.add_argument("--all", action="store_true", help="every case (default: the quick subset)")
    ap.add_argument("--sizes", help="default: expected.json's sizes with --all, its quick_sizes without")
    ap.add_argument("--patterns", help="only these patterns (comma-separated; mixed runs by their names)")
    ap.add_argument("--modes", help="only these modes (hot, cold, graph)")
    ap.add_argument("--language", choices=("cpp", "python"))
    ap.add_argument("--python-dir", help="where crossbench's module is (default: BUILD/python)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--require-python", action="store_true", help="a Python part that cannot run is a failure")
    ap.add_argument("--work", help="scratch folder (default: BUILD/user-patterns-test; the example build is kept)")
    ap.add_argument("--out", help="where the table goes (default: WORK/report)")
    ap.add_argument("--hang-limit-s", type=float, default=5, help="XB_WAIT_DEADLINE_S for the hang cases, s")
    ap.add_argument("--timeout-s", type=float, default=120, help="one run's wall-clock limit")
    ap.add_argument("--min-time", type=float, default=0.1)
    ap.add_argument("--max-time", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--budget-s", type=float, help="start no case after this many seconds (the rest: NOT RUN)")
    ap.add_argument("--generator")
    ap.add_argument("--cmake", default="cmake", help="the cmake executable")
    ap.add_argument("--cmake-arg", action="append", default=[], help="more arguments for configuring the example")
    ap.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv[1:])
    gen = load_generator()
    if a.self_test:
        return self_test(gen)
    if not a.build_dir and not a.examples_build:
        ap.error("--build-dir or --examples-build is required")
    reason = gpu_reason()
    if reason:
        print(f"SKIPPED: {reason}")
        return 77
    if gen.main(["generate_expected.py", "--check"]) != 0:
        print("FAIL: examples/user_patterns/expected.json is not current with patterns.json")
        return 1
    with open(os.path.join(EXAMPLE, "expected.json")) as f:
        expected = json.load(f)
    cases = select(expected, a)
    if not cases:
        print("test_user_patterns: no case selected", file=sys.stderr)
        return 2
    sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else (expected["sizes"] if a.all else expected["quick_sizes"])
    work = os.path.abspath(a.work or os.path.join(a.build_dir or a.examples_build, "user-patterns-test"))
    out = os.path.abspath(a.out or os.path.join(work, "report"))
    runs, logs = os.path.join(work, "runs"), os.path.join(work, "logs")
    for d in (runs, logs):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    a.python_dir = a.python_dir or (os.path.join(a.build_dir, "python") if a.build_dir else None)
    t0 = time.time()
    rows, failures = [], []
    cpp = [c for c in cases if c["language"] == "cpp"]
    py = [c for c in cases if c["language"] == "python"]
    if cpp:
        try:
            bdir = build_examples(a, work)
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
        for p in check_lists(bdir, expected):
            print(f"FAIL: {p}")
            failures.append(p)
        for case in cpp:
            if over_budget(a, t0):
                rows.append(row(case, "not run", None, "", [], None, reason=f"time budget ({a.budget_s:.0f} s) spent"))
                print(status_line(rows[-1]), flush=True)
                continue
            r = run_cpp(a, case, bdir, sizes, runs, logs)
            rows.append(row(case, r["got"], r["rc"], r["line"], r["problems"], r["seconds"]))
            print(status_line(rows[-1]), flush=True)
    if py:
        results, why = run_python(a, py, sizes, runs, logs, t0)
        for case in py:
            if results is None:
                rows.append(row(case, "not run", None, "", ["Python part not run: " + why] if a.require_python else [],
                                None, reason="" if a.require_python else why))
            elif case["id"] not in results:
                rows.append(row(case, "not run", None, "", [], None, reason=f"time budget ({a.budget_s} s) spent"))
            else:
                recs, secs, rc = results[case["id"]]
                got, line, problems, skipped = judge_py(case, recs)
                rows.append(row(case, got, rc, line, problems, secs, reason=skipped))
            print(status_line(rows[-1]), flush=True)
    bad = [r for r in rows if r["result"] == "MISMATCH"]
    counts = {k: sum(1 for r in rows if r["result"] == k) for k in ("PASS", "MISMATCH", "SKIPPED", "NOT RUN")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "nothing ran"
    meta = {"summary": summary, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": git_commit(),
            "sizes": sizes, "selection": "every case" if a.all else "the quick subset", "seconds": time.time() - t0,
            "min_time_s": a.min_time, "max_time_s": a.max_time, "hang_limit_s": a.hang_limit_s,
            "list_problems": failures}
    print()
    print(write_report(rows, out, meta))
    print(f"\ntest_user_patterns: {summary} in {meta['seconds']:.0f} s; table: {out}/user_patterns.md; logs: {logs}")
    incomplete = [r for r in rows if r["result"] == "NOT RUN" and "budget" in r["reason"]]
    return 1 if bad or failures or incomplete else 0


def row(case, got, rc, line, problems, secs, reason=""):
    if got == "skipped" or (got == "not run" and not problems):
        result = "SKIPPED" if got == "skipped" else "NOT RUN"
    else:
        result = "MISMATCH" if problems else "PASS"
    return {"id": case["id"], "pattern": case["pattern"], "mode": case["mode"],
            "language": case["language"] + (f" ({case['program']})" if case.get("program") else ""),
            "expected": expected_text(case), "got": got, "exit": rc, "line": line, "result": result,
            "problems": problems, "seconds": secs, "reason": reason}


def status_line(r):
    extra = f": {'; '.join(r['problems'])}" if r["problems"] else (f" ({r['reason']})" if r["reason"] else "")
    return f"{r['result']:<8} {r['id']:<48} expected {r['expected']}, got {r['got']}{extra}"


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


# ---- self-test: no GPU ------------------------------------------------------------------------


def self_test(gen):
    """The table is current, and the judging reads synthetic runs as the contract says."""
    fails = []

    def ok(cond, what):
        print(("ok:   " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    ok(gen.main(["generate_expected.py", "--check"]) == 0, "expected.json and README.md's table are current")
    with open(os.path.join(EXAMPLE, "expected.json")) as f:
        expected = json.load(f)
    by_id = {c["id"]: c for c in expected["cases"] + expected["mixed"]}
    spec = importlib.util.spec_from_file_location("patterns_py", os.path.join(EXAMPLE, "patterns.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports neither torch nor crossbench
    py_names = {c["pattern"] for c in expected["cases"] if c["language"] == "python"}
    ok(set(mod.PATTERNS) == py_names, f"patterns.py's PATTERNS are the table's Python patterns ({len(py_names)})")
    sizes = [64, 4096]
    tmp = tempfile.mkdtemp(prefix="xb-user-patterns-selftest-")
    try:
        def folder(name, checks, verdict="FAILED: 2 findings", fixtures=()):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            with open(os.path.join(d, "validation.json"), "w") as f:
                json.dump({"verdict": verdict, "passed": verdict.startswith("PASSED"), "checks": checks}, f)
            with open(os.path.join(d, "events.json"), "w") as f:
                json.dump({"fixtures": list(fixtures)}, f)
            return d
        c = by_id["user_patterns/default_stream_kernel/hot"]
        err = "".join(f"bench: fixture failed: default_stream_kernel/fp32/{n}: refused: kernel twice ran on the legacy "
                      f"default stream, which does not wait for the handed stream; enqueue on the stream you were handed\n"
                      for n in sizes)
        sig = [{"check": "work_signature", "status": "failed", "subject": f"default_stream_kernel/fp32/{n}"} for n in sizes]
        d = folder("refused", sig, fixtures=[{"name": f"default_stream_kernel/fp32/{n}", "error": "refused"} for n in sizes])
        got, _, problems = judge_cpp(c, sizes, 1, err, d)
        ok(got == "refused" and not problems, f"a refusal on the legacy default stream is recognised ({problems})")
        got, _, problems = judge_cpp(by_id["user_patterns_ptds/default_stream_kernel/hot"], sizes, 1, err, d)
        ok(problems and "per-thread default stream" in problems[0], "the per-thread build wants its own stream named")
        got, _, problems = judge_cpp(c, sizes, 1, err, folder("nosig", []))
        ok(any("work_signature" in p for p in problems), "a refusal without the work_signature finding is a mismatch")
        got, _, problems = judge_cpp(c, sizes, 1, "", folder("disagree", [], verdict="FAILED: cudaEvent and CUPTI times disagree"))
        ok(got.startswith("validation") and problems, f"the issue's bare disagreement is a mismatch (got {got})")
        c = by_id["user_patterns/malloc_in_launch/hot"]
        fx = [{"name": f"malloc_in_launch/fp32/{n}", "timing": {"sync": "detected"}} for n in sizes]
        d = folder("sync", [], verdict="PASSED: 20 checks agree", fixtures=fx)
        ok(judge_cpp(c, sizes, 0, "", d)[2] == [], "a pass with its synchronization detected")
        fx[1]["timing"]["sync"] = ""
        d = folder("nosync", [], verdict="PASSED: 20 checks agree", fixtures=fx)
        ok(judge_cpp(c, sizes, 0, "", d)[2] != [], "a pass whose synchronization was not detected is a mismatch")
        c = by_id["user_patterns/malloc_in_launch/graph"]
        err = ("bench: fixture failed: malloc_in_launch/fp32/64: its launch synchronizes with the device (detected), and a "
               "synchronizing call cannot be captured into a CUDA graph: run it without --graph\n")
        ok(judge_cpp(c, sizes, 1, err, folder("uncap", []))[:1] == ("uncapturable",), "uncapturable in graph mode")
        c = by_id["user_patterns/capture_skips_kernel/graph"]
        err = "".join(f"bench: fixture failed: capture_skips_kernel/fp32/{n}: refused in graph mode: the graph lacks "
                      f"kernel checksum\n" for n in sizes)
        ok(judge_cpp(c, sizes, 1, err, folder("rg", []))[2] == [], "a graph-mode refusal")
        c = by_id["user_patterns/sync_memcpy_readback/graph"]
        d = folder("wrongpass", [], verdict="PASSED: 20 checks agree")
        ok(judge_cpp(c, sizes, 0, "", d)[2] != [], "the issue's wrong graph-mode PASSED is a mismatch")
        c = by_id["user_patterns/mixed_fault/hot"]
        ok_fx = [{"name": f"on_stream/fp32/{n}"} for n in sizes]
        checks = [{"check": "verified", "status": "passed", "subject": f"on_stream/fp32/{n}"} for n in sizes]
        err = ("user_patterns: fault_oob/fp32/64: device fault: cudaErrorIllegalAddress: an illegal memory access was "
               "encountered; the CUDA context is lost, so 3 fixtures did not run (fault_oob/fp32/4096, side_joined/fp32/64, "
               "side_joined/fp32/4096); the 2 fixtures before it are written to DIR and validated\n")
        d = folder("mixedfault", checks, verdict="PASSED: 12 checks agree", fixtures=ok_fx)
        ok(judge_cpp(c, sizes, 1, err, d)[2] == [], "the fault mid-run keeps the earlier fixtures")
        d = folder("mixedfault2", checks, verdict="PASSED: 12 checks agree", fixtures=ok_fx)
        noisy = err + "bench: fixture failed: side_joined/fp32/64: malloc: an illegal memory access was encountered\n"
        ok(any("follow-on" in p for p in judge_cpp(c, sizes, 1, noisy, d)[2]), "a follow-on error is a mismatch")
        ok(any("2 stderr lines" in p for p in judge_cpp(c, sizes, 1, err + err.replace("64:", "64 again:"), d)[2]),
           "a second fault line is a mismatch")
        c = by_id["user_patterns/hang/hot"]
        err = "bench: hang/fp32/64: a call did not finish within 5 s (XB_WAIT_DEADLINE_S); the context is lost\n"
        ok(judge_cpp(c, sizes, 1, err, folder("hang", []))[:1] == ("hang",), "a hang")
        c = by_id["python/py_side_unjoined/hot"]
        d = folder("py", [{"check": "work_signature", "status": "failed", "subject": "py_side_unjoined/fp32/64"}])
        text = (f"py_side_unjoined/fp32/64 failed: refused: kernel ran on another stream (stream 13), which does not wait "
                f"for the handed stream; ... (run folder {d})")
        recs = [{"id": c["id"], "fixture": "py_side_unjoined/fp32/64", "kind": "raised", "type": "RuntimeError", "text": text}]
        ok(judge_py(c, recs)[2] == [], "a Python refusal")
        recs = [{"id": c["id"], "fixture": "py_side_unjoined/fp32/64", "kind": "result", "passed": False,
                 "verdict": "FAILED: cudaEvent and CUPTI times disagree beyond tolerance"}]
        ok(judge_py(c, recs)[2] != [], "a Python bare disagreement is a mismatch")
        c = by_id["python/py_item_readback/hot"]
        recs = [{"id": c["id"], "fixture": "py_item_readback/fp32/64", "kind": "result", "passed": True, "sync": "detected",
                 "verdict": "PASSED"}]
        ok(judge_py(c, recs)[2] == [], "a Python pass with sync detected")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"test_user_patterns --self-test: {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
