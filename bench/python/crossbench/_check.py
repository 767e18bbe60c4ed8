"""Check a PyTorch profile: export its trace and table, validate them in this process with
crossbench's validator (the `validate` command's own code, in crossbench._core), get the verdict.

    from crossbench import check_profile
    with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = model(x)
    v = check_profile(prof, "prof_check")
    print(v.verdict)   # "PASSED: 11 checks agree (15 results passed), ..." or "PYTORCH DEFECTS: kernels counted ..."

Never imports torch (the profile object is only called), needs no GPU and no CUDA toolkit.
"""
from __future__ import annotations

import dataclasses as _dataclasses
import json as _json
import os as _os
import sys as _sys

from . import _core

DEFAULT_SORT = "self_cuda_time_total"


class ValidateError(ValueError):
    """The files could not be checked (`validate` would exit 2: a file missing or unusable, a
    destination that cannot be written); the message is validate's one line."""


@_dataclasses.dataclass(repr=False)
class Verdict:
    """What the validator found in one set of files: the same as `validate --trace ...` prints,
    writes (validation.json: `report`) and returns (`exit_code`).

    Truthy when passed; str() is the verdict line.
    """
    verdict: str            # the whole one-line verdict ("PASSED: ...", "FAILED: ..." or "PYTORCH DEFECTS: ...":
                            # the files agree and PyTorch's own rules misreport device time); the summary's first
                            # line is the same, fitted into 160 characters
    status: str             # "passed" or "failed" (checks that could not run never fail a verdict)
    exit_code: int          # validate's exit status: 0 passed, 1 a check failed
    counts: dict            # results by status: {"passed", "failed", "not_run", "not_claimed", "not_judged"},
                            # "pytorch_defects": the failed results with a known PyTorch cause (part of "failed"),
                            # "checks_agree", and "noisy_fixtures" (fixtures that missed their precision target)
    results: list           # every result: dicts with check, status, subject, expected, found, message (, cause)
    causes: dict            # failures grouped by cause: cause -> {"label", "findings", "rows", "checks"}
    findings: dict          # cause -> its failed results ("check:<name>" where no cause is known)
    verdicts: dict          # check name -> "passed", "failed", "not_run" or "not_claimed"
    summary: str            # what validate prints (the verdict, findings by cause, counts, "report: PATH")
    report: dict            # the validation.json document (docs/formats.md)
    report_path: str | None   # validation.json written (out_dir given), else None
    markdown_path: str | None  # validation.md written (out_dir given), else None
    trace: str
    table: str | None

    @property
    def passed(self):
        return self.status == "passed"

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.verdict

    def __repr__(self):
        # The dataclass's own repr would print every result and the whole report (kilobytes);
        # this one names what identifies the verdict and where the rest is.
        shown = {k: v for k, v in self.counts.items() if v}
        return (f"Verdict({self.verdict[:120]!r}{'...' if len(self.verdict) > 120 else ''}, "
                f"exit_code={self.exit_code}, counts={shown}, report_path={self.report_path!r})")


def _path(p):
    return None if p is None else _os.fspath(p)


def check_files(trace, table=None, out_dir=None, *, second_trace=None, events=None, title=None):
    """Validates exported files as `validate --trace TRACE [--trace SECOND] [--table TABLE]
    [--events EVENTS]` does and returns a Verdict.

    trace: a Chrome/Kineto trace (torch.profiler's export_chrome_trace; .json or .json.gz).
    table: the key_averages().table() text (or a crossbench table.json); None: no table checks.
    second_trace: a second export of the same session, compared with the first.
    events: cudaEvent times (crossbench events.json or a reference summary.json).
    out_dir: also write out_dir/validation.json and out_dir/validation.md (the folder is made if
        missing); None: nothing is written.
    title: the markdown section's heading (default: the trace's file name).
    Raises ValidateError (one line, naming the file) where validate would exit 2.
    """
    traces = [_path(trace)] + ([_path(second_trace)] if second_trace is not None else [])
    report = markdown = ""
    made = None
    if out_dir is not None:
        out_dir = _os.fspath(out_dir)
        if not _os.path.isdir(out_dir):
            made = out_dir
            _os.makedirs(out_dir)
        report = _os.path.join(out_dir, "validation.json")
        markdown = _os.path.join(out_dir, "validation.md")
    try:
        code, summary, doc, written = _core.check(traces, _path(table) or "", _path(events) or "", report, markdown,
                                                  title or "")
    except ValueError as e:
        if made is not None and not _os.listdir(made):
            _os.rmdir(made)  # a failed check leaves nothing behind
        raise ValidateError(str(e)) from None
    doc = _json.loads(doc)
    findings = {}
    for r in doc["checks"]:
        if r["status"] == "failed":
            findings.setdefault(r.get("cause") or "check:" + r["check"], []).append(r)
    return Verdict(verdict=doc["verdict"], status="passed" if doc["passed"] else "failed", exit_code=code,
                   counts=doc["summary"], results=doc["checks"], causes=doc["causes"], findings=findings,
                   verdicts=doc["verdicts"], summary=summary, report=doc, report_path=written or None,
                   markdown_path=markdown or None, trace=traces[0], table=_path(table))


def export_profile(prof, out_dir, sort_by=DEFAULT_SORT):
    """Writes out_dir/trace.json (prof.export_chrome_trace) and out_dir/table.txt
    (prof.key_averages().table(sort_by=sort_by, row_limit=-1): PyTorch's own text, all rows) of a
    finished torch.profiler profile; returns their paths."""
    out_dir = _os.fspath(out_dir)
    _os.makedirs(out_dir, exist_ok=True)
    trace = _os.path.join(out_dir, "trace.json")
    table = _os.path.join(out_dir, "table.txt")
    prof.export_chrome_trace(trace)
    text = prof.key_averages().table(sort_by=sort_by, row_limit=-1)
    with open(table, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return trace, table


def check_profile(prof, out_dir, sort_by=DEFAULT_SORT):
    """Exports a finished torch.profiler profile into out_dir (trace.json, table.txt: export_profile),
    validates them and returns the Verdict; out_dir also gets validation.json and validation.md.
    Raises ValidateError where the export cannot be checked."""
    trace, table = export_profile(prof, out_dir, sort_by=sort_by)
    return check_files(trace, table, out_dir)


def handler(out_dir, sort_by=DEFAULT_SORT, verbose=True, raise_on_failure=False):
    """An on_trace_ready callable: torch.profiler.profile(schedule=..., on_trace_ready=handler("dir")).
    Each trace ready is exported into out_dir/step_<N>/ and checked (check_profile); the Verdicts are
    kept in the handler's `results` list and printed (verbose). raise_on_failure: AssertionError on
    a failed check."""

    def on_trace_ready(prof):
        step = getattr(prof, "step_num", None)
        where = _os.path.join(_os.fspath(out_dir),
                              "step_%s" % step if step is not None else "trace_%d" % len(on_trace_ready.results))
        result = check_profile(prof, where, sort_by=sort_by)
        on_trace_ready.results.append(result)
        if verbose:
            print("crossbench %s: %s" % (where, result.verdict), file=_sys.stdout)
        if raise_on_failure and not result.passed:
            raise AssertionError("profile check failed: %s (report: %s)" % (result.verdict, result.report_path))

    on_trace_ready.results = []
    return on_trace_ready
