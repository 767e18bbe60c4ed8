#!/usr/bin/env python3
"""The validator against the oracle on every committed PyTorch export (issue 16).

Runs `validate --trace W.json --table W.txt --report R.json` on the nine exports of
tests/data/torch-h200-corpus, the six of tests/data/torch-h200 and the four of
tests/data/torch-derived (issue 37's classes, derived from them) and requires that its failed
results are exactly the real disagreements the oracle lists in expected_findings.json: every
listed (row, cause) reported with that cause, and no other failure (zero false alarms).

Usage: test_validator_findings.py ROOT VALIDATE_EXE   (exit 77 "SKIPPED:" without the binary)
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "validate")
CAUSE = {"overhead_double_count": "overhead_double_count", "annotation_span": "annotation_span",
         "name_written_unknown": "name_written_unknown"}


def row_of(subject):
    # "two_streams.txt line 4 'aten::mm' (cpu_op)" -> aten::mm
    a = subject.find("'")
    b = subject.rfind("'")
    return subject[a + 1:b] if 0 <= a < b else subject


def main():
    if not os.path.exists(EXE):
        print("SKIPPED: no validate binary at %s" % EXE)
        return 77
    with open(os.path.join(ROOT, "tests", "torch_oracle", "expected_findings.json")) as f:
        expected = json.load(f)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for key, rows in sorted(expected.items()):
            corpus, w = key.split("/")
            d = os.path.join(ROOT, "tests", "data", corpus)
            trace = os.path.join(d, w + ".json")
            if not os.path.exists(trace):
                trace += ".gz"
            rep = os.path.join(tmp, w + ".json")
            p = subprocess.run([EXE, "--trace", trace, "--table", os.path.join(d, w + ".txt"), "--report", rep],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            if p.returncode not in (0, 1):
                print("FAILED %s: exit %d %s" % (key, p.returncode, p.stderr.strip()))
                bad += 1
                continue
            with open(rep) as f:
                checks = json.load(f)["checks"]
            found = set()
            for c in checks:
                if c["status"] != "failed":
                    continue
                cause = c.get("cause", "")
                if not cause:
                    print("FAILED %s: false alarm (no known cause): %s [%s] %s" % (key, c["check"], c["subject"], c["message"]))
                    bad += 1
                    continue
                found.add((row_of(c["subject"]), cause))
            want = {(r["row"], CAUSE[r["cause"]]) for r in rows}
            for x in sorted(want - found):
                print("FAILED %s: real disagreement not reported: %s" % (key, x))
                bad += 1
            for x in sorted(found - want):
                print("FAILED %s: reported, but the oracle finds no such disagreement: %s" % (key, x))
                bad += 1
            print("%s: %d real findings (rows by cause), %s" % (key, len(want), "ok" if want == found else "MISMATCH"))
    print("%s" % ("all agree" if bad == 0 else "%d problems" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
