#!/usr/bin/env python3
"""crossbench's check functions on the CPU, without torch: check_files, check_profile, handler,
crossbench-validate and python -m crossbench validate against the `validate` executable.

A fake profile object stands in for torch.profiler.profile: its export_chrome_trace copies a
recorded export of tests/data/torch-h200-corpus and its key_averages().table() returns the
recorded table. Checked, for every recorded workload: check_files and check_profile give the
verdict line, the exit status and the counts `validate --trace T --table F` prints and returns,
and the causes the oracle expects (tests/torch_oracle/expected_findings.json: two_streams reports
the overhead double count, transformer_train_adamw pytorch#130730, compile passes); the command
line (console script and python -m) prints what validate prints and exits as it does, also on
bad input (exit 2, one line); the handler; importing crossbench never imports torch; a failed
check leaves nothing behind.

Usage: test_python_check.py PACKAGE_DIR|installed ROOT VALIDATE_EXE [CONSOLE_SCRIPT]
  PACKAGE_DIR: where the package was built (<build>/python); "installed": the crossbench this
  python3 imports (the wheel test, tests/cpu/test_python_wheel.py, runs it so from a fresh venv).
Exit 0 pass, 1 fail, 77 "SKIPPED: why" when the package was not built.
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

PKG, ROOT, EXE = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
CONSOLE = sys.argv[4] if len(sys.argv) > 4 else None
CORPUS = os.path.join(ROOT, "tests", "data", "torch-h200-corpus")
WORKLOADS = ["compile", "cuda_graph", "linear_fwd_bwd", "long_names", "memory_stack", "nested_same_name", "tiny_ops_20k",
             "transformer_train_adamw", "two_streams"]

if PKG != "installed":
    if not glob.glob(os.path.join(PKG, "crossbench", "_core*.so")):
        print("SKIPPED: the module crossbench._core is not in %s/crossbench: nanobind was not found when CMake "
              "configured the build (scripts/test.sh installs it into <build>/.venv)" % PKG)
        sys.exit(77)
    sys.path.insert(0, os.path.abspath(PKG))
had_torch = "torch" in sys.modules
import crossbench  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def corpus_trace(w):
    p = os.path.join(CORPUS, w + ".json")
    return p if os.path.exists(p) else p + ".gz"


class FakeAverages(object):
    def __init__(self, text):
        self.text = text
        self.calls = []

    def table(self, sort_by=None, row_limit=100):
        self.calls.append((sort_by, row_limit))
        return self.text


class FakeProfile(object):
    """What check_profile uses of torch.profiler.profile: export_chrome_trace, key_averages, step_num."""

    def __init__(self, w, step_num=None):
        self.w = w
        self.step_num = step_num
        with open(os.path.join(CORPUS, w + ".txt")) as f:
            self.averages = FakeAverages(f.read())

    def export_chrome_trace(self, path):
        src = corpus_trace(self.w)
        if src.endswith(".gz"):  # PyTorch writes plain JSON unless the path ends in .gz
            with gzip.open(src, "rb") as i, open(path, "wb") as o:
                shutil.copyfileobj(i, o)
        else:
            shutil.copyfile(src, path)

    def key_averages(self):
        return self.averages


def expected_causes():
    with open(os.path.join(ROOT, "tests", "torch_oracle", "expected_findings.json")) as f:
        exp = json.load(f)
    out = {}
    for w in WORKLOADS:
        rows = {}
        for r in exp["torch-h200-corpus/" + w]:
            rows.setdefault(r["cause"], set()).add((r["row"], r.get("kind")))
        out[w] = {c: len(v) for c, v in rows.items()}
    return out


def run(cmd, cwd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=cwd)


def command_lines():
    """The package's ways to run validate's command line (python -m, and the console script when given)."""
    ways = [("python -m crossbench validate", [sys.executable, "-m", "crossbench", "validate"])]
    if CONSOLE:
        ways.append(("crossbench-validate", [CONSOLE]))
    env_note = "" if PKG == "installed" else " (PYTHONPATH=%s)" % PKG
    return ways, env_note


def main():
    check(had_torch or "torch" not in sys.modules, "importing crossbench imported torch")
    print("crossbench %s from %s" % (crossbench.__version__, os.path.dirname(crossbench.__file__)))
    if PKG == "installed":
        check(os.path.abspath(crossbench.__file__).startswith(os.path.abspath(sys.prefix) + os.sep) and
              not os.path.abspath(crossbench.__file__).startswith(os.path.join(ROOT, "bench") + os.sep),
              "the installed crossbench is imported from %s, not from this python's prefix %s" % (crossbench.__file__, sys.prefix))
    else:
        os.environ["PYTHONPATH"] = os.path.abspath(PKG) + os.pathsep + os.environ.get("PYTHONPATH", "")
    expected = expected_causes()
    longest = 0
    with tempfile.TemporaryDirectory() as tmp:
        ways, env_note = command_lines()
        for w in WORKLOADS:
            trace, table = corpus_trace(w), os.path.join(CORPUS, w + ".txt")
            args = ["--trace", trace, "--table", table]
            exe = run([EXE] + args, tmp)
            check(exe.returncode in (0, 1) and exe.stderr == "", "%s: validate exited %d: %s" % (w, exe.returncode, exe.stderr))
            exe_verdict = exe.stdout.splitlines()[0] if exe.stdout else ""

            # check_files: nothing written without out_dir; validate's verdict, exit status and summary.
            v = crossbench.check_files(trace, table)
            # The verdict whole in the API and the report; the console fits it into 160 characters
            # (inputs, then causes beyond the first, give way; the outcome and counts stay).
            check(v.verdict == v.report["verdict"] and not v.verdict.endswith("..."), "%s: verdict %r" % (w, v.verdict))
            fitted = exe_verdict == v.verdict if len(v.verdict) <= 160 else (
                len(exe_verdict) <= 160 and exe_verdict.split(": ")[0] == v.verdict.split(": ")[0] and
                v.verdict.split(" - ")[0].endswith(exe_verdict.rsplit(", ", 1)[-1]))
            check(fitted, "%s: check_files verdict %r, validate printed %r" % (w, v.verdict, exe_verdict))
            longest = max(longest, len(v.verdict))
            check(v.exit_code == exe.returncode, "%s: check_files exit_code %d, validate %d" % (w, v.exit_code, exe.returncode))
            check(v.summary == exe.stdout, "%s: check_files summary differs from validate's output" % w)
            check(v.report_path is None and v.markdown_path is None, "%s: check_files without out_dir wrote a report" % w)
            # repr() names the verdict, not every result (the dataclass's own repr printed kilobytes).
            r = repr(v)
            check(r.startswith("Verdict(") and len(r) < 600 and "exit_code=%d" % v.exit_code in r and
                  v.verdict[:40] in r, "%s: repr(Verdict) %d characters: %s" % (w, len(r), r[:200]))
            want = expected[w]
            check(v.passed == (not want) and v.status == ("passed" if not want else "failed") and bool(v) == v.passed,
                  "%s: status %r, expected findings %r" % (w, v.status, want))
            # counts: one entry per status, plus pytorch_defects (the failed results with a known PyTorch cause).
            statuses = ("passed", "failed", "not_run", "not_claimed", "not_judged")
            check(v.counts["failed"] == sum(1 for r in v.results if r["status"] == "failed") and
                  sum(v.counts[k] for k in statuses) == len(v.results) and
                  v.counts["pytorch_defects"] == sum(1 for r in v.results if r["status"] == "failed" and r.get("cause")),
                  "%s: counts %r do not count results" % (w, v.counts))
            got = {k: c["rows"] for k, c in v.causes.items()}
            check(got == want, "%s: causes (rows) %r, the oracle expects %r" % (w, got, want))
            check(set(v.findings) == set(v.causes), "%s: findings grouped by the same causes" % w)

            # check_profile on a fake profile: trace.json and table.txt exported, the report written.
            prof = FakeProfile(w)
            out = os.path.join(tmp, "profile", w)
            p = crossbench.check_profile(prof, out)
            check(prof.averages.calls == [("self_cuda_time_total", -1)], "%s: table() called with %r" % (w, prof.averages.calls))
            check(os.path.isfile(os.path.join(out, "trace.json")) and os.path.isfile(os.path.join(out, "table.txt")),
                  "%s: trace.json and table.txt exported into out_dir" % w)
            check(p.report_path == os.path.join(out, "validation.json") and os.path.isfile(p.report_path) and
                  os.path.isfile(p.markdown_path), "%s: report %r, markdown %r" % (w, p.report_path, p.markdown_path))
            with open(p.report_path) as f:
                check(json.load(f)["verdict"] == p.verdict, "%s: validation.json's verdict" % w)
            check(p.verdict.split(" - ")[0] == exe_verdict.split(" - ")[0] and p.exit_code == exe.returncode,
                  "%s: check_profile %r (exit %d), validate %r (exit %d)" % (w, p.verdict, p.exit_code, exe_verdict, exe.returncode))

            # The command line: the same output and exit status as the executable.
            for name, cmd in ways:
                r = run(cmd + args, tmp)
                check(r.returncode == exe.returncode and r.stdout == exe.stdout and r.stderr == "",
                      "%s: %s%s exited %d (validate %d), output %s" % (w, name, env_note, r.returncode, exe.returncode,
                                                                   "the same" if r.stdout == exe.stdout else "differs"))

        check(longest > 160, "no workload's verdict is over 160 characters: the whole-text case is not exercised")

        # A table printed from another profile than the trace: validate's one line, exit 2, nothing
        # written; never findings that blame PyTorch (issue 37 item 5).
        h200 = os.path.join(ROOT, "tests", "data", "torch-h200")
        args = ["--trace", os.path.join(h200, "64_bf16_add.json"), "--table", os.path.join(h200, "4096_bf16_add.txt")]
        exe = run([EXE] + args, tmp)
        try:
            crossbench.check_files(args[1], args[3], os.path.join(tmp, "mismatch-out"))
            check(False, "a table of another profile did not raise")
        except crossbench.ValidateError as e:
            check("4096_bf16_add.txt is not a table of 64_bf16_add.json's profile" in str(e) and "pytorch#" not in str(e),
                  "mismatch ValidateError %r" % str(e))
            check(exe.returncode == 2 and exe.stdout == "" and exe.stderr == "validate: error: %s\n" % e,
                  "validate on the mismatch: exit %d %r" % (exe.returncode, exe.stderr))
        check(not os.path.exists(os.path.join(tmp, "mismatch-out")), "a refused check_files left its out_dir behind")

        # The named cases of the issue.
        v = crossbench.check_files(corpus_trace("two_streams"), os.path.join(CORPUS, "two_streams.txt"))
        check("kernels counted twice under overhead events (3 rows)" in v.verdict, "two_streams verdict: %r" % v.verdict)
        v = crossbench.check_files(corpus_trace("transformer_train_adamw"), os.path.join(CORPUS, "transformer_train_adamw.txt"))
        check("annotation GPU span counted as Self CUDA (2 rows)" in v.verdict, "transformer verdict: %r" % v.verdict)

        # The on_trace_ready handler: one folder per step, results kept.
        h = crossbench.handler(os.path.join(tmp, "handler"), verbose=False)
        h(FakeProfile("compile", step_num=3))
        h(FakeProfile("two_streams", step_num=7))
        check([x.passed for x in h.results] == [True, False], "handler results %r" % h.results)
        check(os.path.isfile(os.path.join(tmp, "handler", "step_3", "validation.json")) and
              os.path.isfile(os.path.join(tmp, "handler", "step_7", "table.txt")), "handler folders step_3, step_7")
        strict = crossbench.handler(os.path.join(tmp, "strict"), verbose=False, raise_on_failure=True)
        try:
            strict(FakeProfile("two_streams", step_num=1))
            check(False, "raise_on_failure did not raise")
        except AssertionError as e:
            check(str(e).startswith("profile check failed: PYTORCH DEFECTS: ") and "kernels counted twice" in str(e),
                  "raise_on_failure message %r" % str(e))

        # Unusable input: validate's one line as ValidateError, nothing left behind; exit 2 on the command line.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        exe = run([EXE, "--trace", bad], tmp)
        try:
            crossbench.check_files(bad, None, os.path.join(tmp, "bad-out"))
            check(False, "unusable input did not raise")
        except crossbench.ValidateError as e:
            check(isinstance(e, ValueError) and "\n" not in str(e) and "bad.json" in str(e), "ValidateError %r" % str(e))
            check(exe.returncode == 2 and exe.stderr == "validate: error: %s\n" % e,
                  "validate says %r (exit %d), check_files %r" % (exe.stderr, exe.returncode, str(e)))
        check(not os.path.exists(os.path.join(tmp, "bad-out")), "a failed check_files left its out_dir behind")
        for name, cmd in ways:
            for args in (["--trace", bad], ["--bogus"], []):
                r = run(cmd + args, tmp)
                e = run([EXE] + args, tmp)
                tail = lambda s: s.split(": error: ", 1)[-1]
                check(r.returncode == 2 == e.returncode and r.stdout == "" and r.stderr.count("\n") == 1 and
                      tail(r.stderr) == tail(e.stderr),
                      "%s %s: exit %d %r; validate: exit %d %r" % (name, args, r.returncode, r.stderr, e.returncode, e.stderr))
            r = run(cmd + ["--version"], tmp)
            check(r.returncode == 0 and r.stdout == run([EXE, "--version"], tmp).stdout, "%s --version: %r" % (name, r.stdout))
        r = run([sys.executable, "-m", "crossbench", "frobnicate"], tmp)
        check(r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr, "python -m crossbench frobnicate: %r" % r.stderr)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("crossbench check functions: %d workloads through check_files, check_profile and %s, as validate: OK" %
          (len(WORKLOADS), " and ".join(n for n, _ in ways)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
