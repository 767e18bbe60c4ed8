#!/usr/bin/env python3
"""The validator against the oracle on a generated matrix of PyTorch exports (issue 29).

Usage: matrix_findings.py VALIDATE_EXE CORPUS_DIR [CORPUS_DIR ...] [--json OUT] [--quiet]

A corpus folder holds, per export E, E.meta.json (its "trace" and "tables" keys name the files:
tools/lab/torch_matrix/record.py writes them), the trace and every table E.T.txt. For every
(trace, table) pair it runs `VALIDATE_EXE --trace TRACE --table TABLE --report R` and derives the
same table with the oracle (key_averages.py: PyTorch's rules re-derived in plain Python, no code
shared with the validator). Every FAILED result of the validator is then one of:

  confirmed    the oracle finds the same thing: a row whose printed cells disagree with PyTorch's
               rules applied to the trace (no cause, or name_written_unknown: the trace writes
               the row's name "unknown"), a row that PyTorch's rules themselves get wrong (cause
               overhead_double_count / annotation_span, key_averages.defects), or a trace
               finding of trace_checks (stream overlap O1, flows F1, GPU spans S1)
  false alarm  anything else

and exit 2 on a table is a refusal. The oracle derives each table for its call's options
(table_text.parse_call of the meta.json text: sort key, row_limit, top_level_events_only, name
and shape widths, header, group_by_input_shape, group_by_stack_n). The oracle's own
disagreements that the validator did not report (as a failure or a not-judged result on that
row) are "missed"; so are rows the oracle says PyTorch prints and the table lacks, unless the
validator reported that name. What the oracle cannot judge (table_compare.NotJudged: stacks,
overload names, FLOPs without flops in the trace, an async row the trace does not mark, a cut
by an unknown sort value) is counted as "oracle did not judge" by reason, never as a
disagreement or a miss. Exit status: 0 when there is no false alarm, refusal or miss; 1
otherwise; 77 (SKIPPED) without the binary.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import key_averages as ka  # noqa: E402
import trace_checks  # noqa: E402
import table_compare as tc  # noqa: E402
import table_text as tt  # noqa: E402

DEFECT_CAUSES = (ka.CAUSE_OVERHEAD, ka.CAUSE_SPAN)
_CORR = re.compile(r"\(correlation (\d+)\)")
_EXT = re.compile(r"\(External id (\d+)\)")
_LINE = re.compile(r"\.txt line (\d+)\b")


def _same_name(cut, full):
    """A table's name (maybe cut, ending in '...') against a full event name."""
    if cut.endswith("..."):
        return full.startswith(cut[:-3])
    return cut == full


def exports(corpus):
    for f in sorted(os.listdir(corpus)):
        if not f.endswith(".meta.json"):
            continue
        with open(os.path.join(corpus, f)) as fh:
            meta = json.load(fh)
        base = f[: -len(".meta.json")]
        trace = os.path.join(corpus, meta.get("trace", base + ".json"))
        if not os.path.exists(trace) and os.path.exists(trace + ".gz"):
            trace += ".gz"
        for t, call in sorted(meta.get("tables", {}).items()):
            yield base, trace, os.path.join(corpus, "%s.%s.txt" % (base, t)), call


def oracle_view(trace, table_path, call, cache):
    """(rows with disagreements by table line, names the table lacks, total disagreements,
    defect rows [(full name, cause)], not-judged [(line or None, reason)], table-wide
    disagreements (columns, header), parse error or None)."""
    if cache.get("trace") != trace:
        cache.clear()
        cache["trace"] = trace
        try:
            cache["events"] = ka.derive_events(trace)
            cache["defects"] = ka.defects_full(trace)
        except Exception as e:  # an oracle that cannot read the trace judges nothing
            cache["error"] = e
    if "error" in cache:
        return set(), set(), False, [], [], [], "oracle: %s" % cache["error"]
    defects = cache["defects"]
    try:
        opts = tt.parse_call(call)
        with open(table_path, encoding="utf-8") as f:
            t = tt.parse_table(f.read())
    except Exception as e:
        return set(), set(), False, defects, [], [], "oracle: %s" % e
    g = bool(opts.group_by_input_shape)
    if ("oracle", g) not in cache:
        cache[("oracle", g)] = ka.Oracle(ka.key_averages(cache["events"], g))
    c = tc.compare(cache[("oracle", g)], t, opts)
    dis = c.disagreements
    lines = {d.line for d in dis if d.line is not None}
    absent = {d.row for d in dis if d.column == "row" and d.line is None}
    totals = any(d.row == "(total)" for d in dis)
    others = [d for d in dis if d.line is None and d.column != "row" and d.row != "(total)"]
    nj = [(n.line, n.reason) for n in c.not_judged]
    return lines, absent, totals, defects, nj, others, None


def judge(exe, corpora, quiet=False):
    res = {"pairs": 0, "refused": [], "confirmed": 0, "false_alarms": [], "not_judged": 0,
           "passed": 0, "missed": [], "oracle_unreadable": [], "oracle_not_judged": {},
           "oracle_table_disagreements": []}
    cache = {}
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "r.json")
        for corpus in corpora:
            for base, trace, table, call in exports(corpus):
                res["pairs"] += 1
                tname = os.path.basename(table)
                p = subprocess.run([exe, "--trace", trace, "--table", table, "--report", rep],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   universal_newlines=True)
                if p.returncode not in (0, 1):
                    res["refused"].append((tname, p.stderr.strip()[:300]))
                    continue
                with open(rep) as f:
                    checks = json.load(f)["checks"]
                lines, absent, totals, defects, nj, others, err = oracle_view(trace, table, call,
                                                                              cache)
                if cache.get("trace_checks_of") != trace:
                    cache["trace_checks_of"] = trace
                    cache["trace_checks"] = trace_checks.check_trace(trace)
                tchk = cache["trace_checks"]
                if err:
                    res["oracle_unreadable"].append((tname, err))
                for _, reason in nj:
                    res["oracle_not_judged"][reason] = res["oracle_not_judged"].get(reason, 0) + 1
                for d in others:
                    res["oracle_table_disagreements"].append((tname, repr(d)[:200]))
                nj_lines = {ln for ln, _ in nj if ln is not None}
                with open(table, encoding="utf-8") as f:
                    tlines = f.read().splitlines()
                reported_lines = set()
                for c in checks:
                    st = c["status"]
                    m = _LINE.search(c.get("subject", ""))
                    if m and st in ("failed", "not_run", "not_judged"):
                        reported_lines.add(int(m.group(1)))
                    if st == "passed":
                        res["passed"] += 1
                    elif st in ("not_run", "not_judged"):
                        res["not_judged"] += 1
                    if st != "failed":
                        continue
                    cause = c.get("cause", "")
                    ok = False
                    if m:
                        ln = int(m.group(1))
                        row = tlines[ln - 1] if 0 < ln <= len(tlines) else ""
                        if cause in DEFECT_CAUSES:
                            ok = any(cz == cause and _row_has(row, full) for full, cz in defects)
                        else:
                            ok = ln in lines
                    elif cause == "" and c["check"] == "table_totals" and "total" in c["subject"]:
                        ok = totals
                    elif c["check"] == "table_rows" and "has events of this name" in c["message"]:
                        nm = c["subject"].split("'", 1)[-1].rsplit("'", 1)[0]
                        ok = any(_same_name(a, nm) for a in absent)
                    elif c["check"] == "annotation_span" and _EXT.search(c.get("subject", "")):
                        ext = int(_EXT.search(c["subject"]).group(1))
                        ok = any(x[0] == ext for x in tchk["spans"])
                    elif c["check"] in ("stream_overlap", "flows"):
                        corr = _CORR.search(c.get("subject", ""))
                        found = tchk["overlap"] if c["check"] == "stream_overlap" else tchk["flows"]
                        ok = corr is not None and any(x[0] == int(corr.group(1)) for x in found)
                    if ok:
                        res["confirmed"] += 1
                    else:
                        res["false_alarms"].append((tname, c["check"], cause, c["subject"][:120],
                                                    c["message"][:200]))
                # the oracle's own trace findings (stream overlap, flows) the validator did not report
                for kind, check in (("overlap", "stream_overlap"), ("flows", "flows")):
                    for corr, _ in tchk[kind]:
                        if not any(c["check"] == check and c["status"] in ("failed", "not_judged")
                                   and "correlation %d)" % corr in c["subject"] for c in checks):
                            res["missed"].append((tname, 0, "%s: correlation %d" % (check, corr)))
                # GPU spans that are not Kineto's span of their annotation's work (trace_checks S1)
                for ext, _ in tchk["spans"]:
                    if not any(c["check"] == "annotation_span" and c["status"] in ("failed", "not_judged")
                               and "(External id %d)" % ext in c["subject"] for c in checks):
                        res["missed"].append((tname, 0, "annotation_span: External id %d" % ext))
                for kind in ("overlap_not_judged", "flows_not_judged"):
                    if tchk[kind]:
                        why = "trace %s (%s)" % (kind, "no deviceProperties" if kind.startswith("overlap")
                                                 else "memset/memcpy without a device record")
                        res["oracle_not_judged"][why] = res["oracle_not_judged"].get(why, 0) + len(tchk[kind])
                reported_names = {_subject_name(c["subject"]) for c in checks
                                  if c["status"] in ("failed", "not_run", "not_judged")}
                for nm in sorted(absent):
                    if not any(_same_name(nm, x) or _same_name(x, nm) for x in reported_names):
                        res["missed"].append((tname, 0, "row absent from the table: " + nm))
                for ln in sorted(lines - reported_lines - nj_lines):
                    res["missed"].append((tname, ln, tlines[ln - 1].strip()[:100]
                                          if 0 < ln <= len(tlines) else ""))
                if not quiet:
                    sys.stdout.write(".")
                    sys.stdout.flush()
    if not quiet:
        sys.stdout.write("\n")
    return res


def _subject_name(subject):
    """The quoted name in a check's subject ("... line 7 'cudaLaunchKernel' (cuda_runtime)")."""
    if "'" not in subject:
        return ""
    return subject.split("'", 1)[1].rsplit("'", 1)[0]


def _row_has(row_line, full_name):
    """Does a table text line show the event name (maybe cut) first?"""
    name = row_line.strip()
    # the name is the text before the first run of two spaces, right-aligned in its column
    name = re.split(r"\s{2,}", name)[0]
    return _same_name(name, full_name) or (name.endswith("...") and full_name.startswith(name[:-3]))


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    out = None
    if "--json" in argv:
        out = argv[argv.index("--json") + 1]
        args.remove(out)
    if len(args) < 2:
        print(__doc__)
        return 2
    exe, corpora = args[0], args[1:]
    if not os.path.exists(exe):
        print("SKIPPED: no validate binary at %s" % exe)
        return 77
    r = judge(exe, corpora, quiet="--quiet" in argv)
    print("pairs %d: refused %d, validator failures confirmed by the oracle %d, false alarms %d, "
          "oracle disagreements missed %d; results passed %d, not judged %d; oracle could not "
          "read %d, oracle did not judge %d" % (
              r["pairs"], len(r["refused"]), r["confirmed"], len(r["false_alarms"]),
              len(r["missed"]), r["passed"], r["not_judged"], len(r["oracle_unreadable"]),
              sum(r["oracle_not_judged"].values())))
    for reason, n in sorted(r["oracle_not_judged"].items()):
        print("ORACLE DID NOT JUDGE %d: %s" % (n, reason))
    for x in r["oracle_table_disagreements"][:20]:
        print("ORACLE TABLE-WIDE %s: %s" % x)
    for x in r["refused"][:20]:
        print("REFUSED %s: %s" % x)
    for x in r["false_alarms"][:40]:
        print("FALSE ALARM %s [%s %s] %s: %s" % x)
    for x in r["missed"][:20]:
        print("MISSED %s line %d: %s" % x)
    for x in r["oracle_unreadable"][:10]:
        print("ORACLE %s: %s" % x)
    if out:
        with open(out, "w") as f:
            json.dump(r, f, indent=1)
    return 0 if not (r["refused"] or r["false_alarms"] or r["missed"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
