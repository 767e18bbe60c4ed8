"""Check a PyTorch profile in one call: export its trace and table, run crossbench's `validate`,
get the verdict (issue 16 item 5; README "Check your PyTorch profile").

    import sys; sys.path.insert(0, "validate/python")     # this folder of the repository
    import crossbench_check
    with torch.profiler.profile(activities=[...CPU, ...CUDA]) as prof:
        y = model(x)
    result = crossbench_check.check_profile(prof, "prof_check")
    print(result.verdict)        # "PASSED: 11 checks agree, ..." or "FAILED: 4 findings: kernels counted twice ..."

- check_profile(prof, out_dir): writes out_dir/trace.json (prof.export_chrome_trace) and
  out_dir/table.txt (prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=-1)),
  runs `validate --trace ... --table ... --report out_dir/validation.json --markdown
  out_dir/validation.md` and returns a CheckResult.
- check_files(trace, table, out_dir): the same for files already exported.
- handler(out_dir): an on_trace_ready handler for torch.profiler.profile(schedule=...): each
  trace goes to out_dir/step_<N>/, its result is appended to the handler's `results` and its
  verdict printed.

The `validate` binary: the `validate` argument, else $XB_VALIDATE, else `validate` on PATH (when
it is crossbench's), else <repository>/$XB_BUILD_DIR/validate, build/validate, build-*/validate.
Never imports torch (the profile object is only called), so it runs where torch is not installed.
Python 3.6 or later; standard library only. Also a command: crossbench_check.py TRACE TABLE [OUT_DIR].
"""
import glob
import json
import os
import shutil
import subprocess
import sys

__all__ = ["CheckResult", "ValidateError", "find_validate", "check_files", "check_profile", "export_profile", "handler"]

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SORT = "self_cuda_time_total"


class ValidateError(RuntimeError):
    """validate could not check the files (exit 2: a file missing or unusable); the message is its one line."""


class CheckResult(object):
    """What validate found.

    passed: no check failed (checks that could not run are never counted as passed).
    verdict: the one-line verdict validate prints first ("PASSED: ..." / "FAILED: ...").
    causes: cause -> {"label", "findings", "rows", "checks"}: the failures grouped by cause
        ("overhead_double_count", "annotation_span", or "check:<name>" when no cause is known).
    findings: cause -> the failed results of that cause (dicts: check, subject, expected, found, message).
    report_path, markdown_path, trace, table: the files; summary: validate's printed text.
    returncode: validate's exit status (0 passed, 1 failed).
    """

    def __init__(self, passed, verdict, causes, findings, report_path, markdown_path, trace, table, summary, returncode):
        self.passed = passed
        self.verdict = verdict
        self.causes = causes
        self.findings = findings
        self.report_path = report_path
        self.markdown_path = markdown_path
        self.trace = trace
        self.table = table
        self.summary = summary
        self.returncode = returncode

    def __bool__(self):
        return self.passed

    __nonzero__ = __bool__

    def __str__(self):
        return self.verdict

    def __repr__(self):
        return "CheckResult(passed=%r, verdict=%r, report_path=%r)" % (self.passed, self.verdict, self.report_path)


def _is_crossbench_validate(path):
    try:
        p = subprocess.run([path, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                           universal_newlines=True)
    except (OSError, subprocess.SubprocessError):
        return False
    return "crossbench" in p.stdout


def find_validate(validate=None):
    """The path of crossbench's `validate` binary (see the module's docstring for the order)."""
    if validate:
        if not (os.path.isfile(validate) and os.access(validate, os.X_OK)):
            raise FileNotFoundError("validate binary %r (argument) is not an executable file" % validate)
        return validate
    env = os.environ.get("XB_VALIDATE")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise FileNotFoundError("validate binary %r ($XB_VALIDATE) is not an executable file" % env)
        return env
    on_path = shutil.which("validate")
    if on_path and _is_crossbench_validate(on_path):
        return on_path
    candidates = []
    if os.environ.get("XB_BUILD_DIR"):
        candidates.append(os.path.join(_REPO, os.environ["XB_BUILD_DIR"], "validate"))
    candidates.append(os.path.join(_REPO, "build", "validate"))
    candidates += sorted(glob.glob(os.path.join(_REPO, "build-*", "validate")), key=os.path.getmtime, reverse=True)
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("no crossbench validate binary: pass validate=PATH, set $XB_VALIDATE, put it on PATH, or "
                            "build it (bash scripts/setup.sh; looked for %s)" % ", ".join(candidates))


def check_files(trace, table=None, out_dir=None, validate=None, second_trace=None, timeout=None):
    """Validates exported files: `trace` (export_chrome_trace, .json or .json.gz), optionally the
    key_averages().table() text `table` and a second trace of the same session. The report goes to
    out_dir/validation.json and out_dir/validation.md (out_dir defaults to the trace's folder).
    Returns a CheckResult; raises ValidateError when validate cannot read the files."""
    exe = find_validate(validate)
    out_dir = out_dir or os.path.dirname(os.path.abspath(trace))
    os.makedirs(out_dir, exist_ok=True)
    report = os.path.join(out_dir, "validation.json")
    markdown = os.path.join(out_dir, "validation.md")
    cmd = [exe, "--trace", str(trace)]
    if second_trace:
        cmd += ["--trace", str(second_trace)]
    if table:
        cmd += ["--table", str(table)]
    cmd += ["--report", report, "--markdown", markdown]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    if p.returncode not in (0, 1):
        raise ValidateError((p.stderr.strip() or p.stdout.strip() or "validate exited %d" % p.returncode))
    with open(report) as f:
        doc = json.load(f)
    verdict = doc.get("verdict") or (p.stdout.splitlines() or [""])[0]
    findings = {}
    for c in doc.get("checks", []):
        if c.get("status") != "failed":
            continue
        key = c.get("cause") or "check:" + c.get("check", "")
        findings.setdefault(key, []).append(c)
    return CheckResult(passed=bool(doc.get("passed")), verdict=verdict, causes=doc.get("causes", {}), findings=findings,
                       report_path=report, markdown_path=markdown, trace=str(trace), table=str(table) if table else None,
                       summary=p.stdout, returncode=p.returncode)


def export_profile(prof, out_dir, sort_by=DEFAULT_SORT):
    """Writes out_dir/trace.json and out_dir/table.txt of a finished torch.profiler profile;
    returns their paths. The table is PyTorch's own key_averages().table() text, all rows."""
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "trace.json")
    table = os.path.join(out_dir, "table.txt")
    prof.export_chrome_trace(trace)
    text = prof.key_averages().table(sort_by=sort_by, row_limit=-1)
    with open(table, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return trace, table


def check_profile(prof, out_dir, validate=None, sort_by=DEFAULT_SORT, timeout=None):
    """Exports a finished torch.profiler profile into out_dir (trace.json, table.txt), validates
    them and returns a CheckResult (passed, verdict, causes, findings, report_path)."""
    trace, table = export_profile(prof, out_dir, sort_by=sort_by)
    return check_files(trace, table, out_dir, validate=validate, timeout=timeout)


def handler(out_dir, validate=None, sort_by=DEFAULT_SORT, verbose=True, raise_on_failure=False):
    """An on_trace_ready handler: torch.profiler.profile(schedule=..., on_trace_ready=handler("dir")).
    Each trace ready is exported into out_dir/step_<N>/ and validated; the CheckResults are kept in
    the handler's `results` list, the verdicts printed (verbose). raise_on_failure: AssertionError
    on a failed check."""

    def on_trace_ready(prof):
        step = getattr(prof, "step_num", None)
        where = os.path.join(out_dir, "step_%s" % step if step is not None else "trace_%d" % len(on_trace_ready.results))
        result = check_profile(prof, where, validate=validate, sort_by=sort_by)
        on_trace_ready.results.append(result)
        if verbose:
            print("crossbench_check %s: %s" % (where, result.verdict))
        if raise_on_failure and not result.passed:
            raise AssertionError("profile check failed: %s (report: %s)" % (result.verdict, result.report_path))

    on_trace_ready.results = []
    return on_trace_ready


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: crossbench_check.py TRACE [TABLE] [OUT_DIR]   (prints validate's summary; exit 0 passed, 1 failed, 2 error)")
        return 0 if len(argv) >= 2 else 2
    try:
        r = check_files(argv[1], argv[2] if len(argv) > 2 else None, argv[3] if len(argv) > 3 else None)
    except (ValidateError, FileNotFoundError) as e:
        print("crossbench_check: error: %s" % e, file=sys.stderr)
        return 2
    sys.stdout.write(r.summary)
    return 0 if r.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
