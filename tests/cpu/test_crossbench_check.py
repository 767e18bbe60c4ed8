#!/usr/bin/env python3
"""validate/python/crossbench_check.py on the CPU, without torch (issue 16 item 5).

A fake profile object stands in for torch.profiler.profile: its export_chrome_trace copies a
recorded export of tests/data/torch-h200-corpus and its key_averages().table() returns the
recorded table. Checked: check_profile, check_files and the on_trace_ready handler give the
verdicts and causes the oracle expects (tests/torch_oracle/expected_findings.json): two_streams
reports the overhead double count, transformer_train_adamw pytorch#130730, compile passes; the
module never imports torch; how it finds the binary; unusable input raises ValidateError.

Usage: test_crossbench_check.py ROOT VALIDATE_EXE   (exit 77 "SKIPPED:" without the binary)
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "validate")
CORPUS = os.path.join(ROOT, "tests", "data", "torch-h200-corpus")
WORKLOADS = ["compile", "cuda_graph", "linear_fwd_bwd", "long_names", "memory_stack", "nested_same_name", "tiny_ops_20k",
             "transformer_train_adamw", "two_streams"]

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


def main():
    if not os.path.exists(EXE):
        print("SKIPPED: no validate binary at %s" % EXE)
        return 77
    sys.path.insert(0, os.path.join(ROOT, "validate", "python"))
    had_torch = "torch" in sys.modules
    import crossbench_check as cc
    check(had_torch or "torch" not in sys.modules, "importing crossbench_check imported torch")

    expected = expected_causes()
    with tempfile.TemporaryDirectory() as tmp:
        # check_profile on a fake profile of each recorded workload.
        for w in WORKLOADS:
            prof = FakeProfile(w)
            out = os.path.join(tmp, "profile", w)
            r = cc.check_profile(prof, out, validate=EXE)
            check(prof.averages.calls == [("self_cuda_time_total", -1)], "%s: table() called with %r" % (w, prof.averages.calls))
            check(os.path.isfile(os.path.join(out, "trace.json")) and os.path.isfile(os.path.join(out, "table.txt")),
                  "%s: trace.json and table.txt exported into out_dir" % w)
            check(os.path.isfile(r.report_path) and r.report_path == os.path.join(out, "validation.json"),
                  "%s: report %s" % (w, r.report_path))
            check(os.path.isfile(r.markdown_path), "%s: markdown %s" % (w, r.markdown_path))
            want = expected[w]
            check(r.passed == (not want), "%s: passed %r, expected findings %r" % (w, r.passed, want))
            check(bool(r) == r.passed and str(r) == r.verdict, "%s: bool/str of the result" % w)
            check(r.verdict.startswith("PASSED: " if not want else "FAILED: "), "%s: verdict %r" % (w, r.verdict))
            check(r.verdict == r.summary.splitlines()[0], "%s: the verdict is the printed summary's first line" % w)
            check(len(r.verdict) <= 160, "%s: verdict longer than 160 characters" % w)
            got = {k: v["rows"] for k, v in r.causes.items()}
            check(got == want, "%s: causes (rows) %r, the oracle expects %r" % (w, got, want))
            check(set(r.findings) == set(r.causes), "%s: findings grouped by the same causes" % w)
            for k, v in r.causes.items():
                check(len(r.findings[k]) == v["findings"], "%s: %s: %d findings listed, %d counted" % (w, k, len(r.findings[k]), v["findings"]))

        # The named cases of the issue.
        r = cc.check_files(corpus_trace("two_streams"), os.path.join(CORPUS, "two_streams.txt"), os.path.join(tmp, "ts"),
                           validate=EXE)
        check(not r.passed and r.returncode == 1, "two_streams fails")
        check("kernels counted twice under overhead events (3 rows)" in r.verdict, "two_streams verdict: %r" % r.verdict)
        check(r.causes.get("overhead_double_count", {}).get("label", "").startswith("kernels counted twice under overhead events"),
              "two_streams cause label: %r" % r.causes)
        r = cc.check_files(corpus_trace("compile"), os.path.join(CORPUS, "compile.txt"), os.path.join(tmp, "compile"),
                           validate=EXE)
        check(r.passed and r.returncode == 0 and r.causes == {} and r.findings == {}, "compile passes: %r" % r.verdict)
        r = cc.check_files(corpus_trace("transformer_train_adamw"), os.path.join(CORPUS, "transformer_train_adamw.txt"),
                           os.path.join(tmp, "tr"), validate=EXE)
        check("annotation GPU span counted as Self CUDA (2 rows)" in r.verdict, "transformer verdict: %r" % r.verdict)

        # The on_trace_ready handler: one folder per step, results kept.
        h = cc.handler(os.path.join(tmp, "handler"), validate=EXE, verbose=False)
        h(FakeProfile("compile", step_num=3))
        h(FakeProfile("two_streams", step_num=7))
        check([x.passed for x in h.results] == [True, False], "handler results %r" % h.results)
        check(os.path.isfile(os.path.join(tmp, "handler", "step_3", "validation.json")) and
              os.path.isfile(os.path.join(tmp, "handler", "step_7", "table.txt")), "handler folders step_3, step_7")
        strict = cc.handler(os.path.join(tmp, "strict"), validate=EXE, verbose=False, raise_on_failure=True)
        try:
            strict(FakeProfile("two_streams", step_num=1))
            check(False, "raise_on_failure did not raise")
        except AssertionError as e:
            check("FAILED: " in str(e), "raise_on_failure message %r" % str(e))

        # Finding the binary: $XB_VALIDATE; a bad argument is an error naming it.
        old = os.environ.get("XB_VALIDATE")
        os.environ["XB_VALIDATE"] = EXE
        try:
            check(cc.find_validate() == EXE, "find_validate() with $XB_VALIDATE")
        finally:
            if old is None:
                del os.environ["XB_VALIDATE"]
            else:
                os.environ["XB_VALIDATE"] = old
        try:
            cc.find_validate(os.path.join(tmp, "nonexistent"))
            check(False, "a missing binary was accepted")
        except FileNotFoundError as e:
            check("nonexistent" in str(e), "missing binary message %r" % str(e))

        # Unusable input: validate's one line as ValidateError.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        try:
            cc.check_files(bad, None, os.path.join(tmp, "bad"), validate=EXE)
            check(False, "unusable input did not raise")
        except cc.ValidateError as e:
            check("bad.json" in str(e), "ValidateError message %r" % str(e))

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("crossbench_check: %d workloads through check_profile, check_files, handler: OK" % len(WORKLOADS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
