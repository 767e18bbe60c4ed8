#!/usr/bin/env python3
"""The oracle's table against a printed ``key_averages().table()``: which rows PyTorch prints
for the call's options, what each cell must read, and where the printed table disagrees.
Plain Python, no torch, no code shared with the C++ validator.

PyTorch 2.11 sources (read, not copied): torch/autograd/profiler_util.py
  _build_table       sort (stable, descending, getattr(evt, sort_by with cuda -> device)),
                     row_limit (counts printed rows only), top_level_events_only (skips a row
                     whose FunctionEventAvg.cpu_parent, the first event's, is set), name cut at
                     max_name_column_width - 3, Input Shapes cell str(shapes)[:width] with width
                     min(longest + 4, max_shapes_column_width), header and top-level lines,
                     columns by has_device_time / profile_memory / has_device_mem /
                     has_input_shapes / has_stack / with_flops, async CPU total % literal 0,
                     totals over every row (printed or not)
  EventList.key_averages   grouping keys (group_by_input_shapes, group_by_stack_n)

Usage:
  python3 tests/torch_oracle/table_compare.py TRACE.json[.gz] TABLE.txt ["CALL"]
CALL is the text of the call that printed the table ("prof.key_averages().table(sort_by=...)");
without it PyTorch's defaults are assumed and a cut table's missing rows are not judged.
"""

import sys

import key_averages as ka
import table_text as tt

COMPARED = ["# of Calls", "Self CPU", "CPU total", "CPU time avg", "Self CUDA", "CUDA total",
            "CUDA time avg", "Self CPU %", "CPU total %", "Self CUDA %",
            "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"]
ASYNC_SHARE = "0"   # P6: total_cpu_percent of an async event is the int 0, not a share
TOP_LEVEL_LINE = "This report only display top-level ops statistics"

# Reasons the oracle gives for what it does not judge (matrix_findings counts them).
NJ_STACK = "grouped by Python stacks (group_by_stack_n with a Source Location column): the " \
           "Chrome trace carries no per-op stack"
NJ_OVERLOAD = "grouped by overload name: the Chrome trace carries no overload names"
NJ_FLOPS = "FLOPs column: the Chrome trace carries no per-op flops"
NJ_ASYNC = "async in PyTorch's table (CPU total % printed as 0), the trace does not say so"
NJ_CUT = "rows cut by row_limit with sort_by='%s' (a value the trace does not carry)"
NJ_LEGACY = "device columns of the legacy profiler (torch.autograd.profiler.profile(use_device='cuda'), " \
            "KINETO_GPU_FALLBACK): per-op cudaEvent times the trace does not carry"
# Why a table row's name disagrees with the trace's: key_averages.py K2 (cause name_written_unknown)
WHY_RENAMED = "the trace writes this name \"unknown\" (Kineto's export keeps printable ASCII only)"
DEVICE_COLUMNS = ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg")


def legacy_device_columns(o, table):
    """The table's device columns are the legacy profiler's per-op cudaEvent times
    (torch/autograd/profiler.py _parse_kineto_results: with use_device='cuda' and
    KINETO_GPU_FALLBACK a CPU event's cuda_elapsed_us becomes its one kernel, is_legacy): the
    trace has no device record (no device row in the oracle) and the table shows device time on
    host rows only (a device-only row would be of a profile with device records)."""
    if "Self CUDA" not in table.columns or any(r.device == ka.CUDA for r in o.rows):
        return False
    seen = False
    for tr in table.rows:
        cells = tr.cells
        cuda = any(tt.table_cell(c, cells[c].strip())[0] for c in ("Self CUDA", "CUDA total") if c in cells)
        cpu = any(tt.table_cell(c, cells[c].strip())[0] for c in ("Self CPU", "CPU total") if c in cells)
        if cuda and not cpu:
            return False
        seen = seen or bool(cuda)
    return seen


def row_values(o, r):
    """Column -> value of one oracle row: times in microseconds, percentages in percent,
    memory in bytes, calls as int."""
    us = lambda ns: ns / 1000.0
    return {
        "Self CPU %": None if o.self_cpu_total == 0 else r.self_cpu * 100.0 / o.self_cpu_total,
        "Self CPU": us(r.self_cpu),
        "CPU total %": None if o.self_cpu_total == 0 else r.cpu_total * 100.0 / o.self_cpu_total,
        "CPU total": us(r.cpu_total),
        "CPU time avg": us(r.cpu_avg),
        "Self CUDA": us(r.self_cuda),
        "Self CUDA %": None if o.self_cuda_total == 0 else r.self_cuda * 100.0 / o.self_cuda_total,
        "CUDA total": us(r.cuda_total),
        "CUDA time avg": us(r.cuda_avg),
        "CPU Mem": r.cpu_mem,
        "Self CPU Mem": r.self_cpu_mem,
        "CUDA Mem": r.cuda_mem,
        "Self CUDA Mem": r.self_cuda_mem,
        "# of Calls": r.count,
    }


def render(o, sort_by="self_cuda_time_total"):
    """The oracle's rows as text (not byte-identical to PyTorch's table: for reading)."""
    cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if o.has_device_time:
        cols += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    cols += ["# of Calls"]
    out = ["%55s  %s  kind" % ("Name", "  ".join("%12s" % c for c in cols))]
    for r in o.sorted_rows(sort_by):
        v = row_values(o, r)
        cells = []
        for c in cols:
            x = v[c]
            if c == "# of Calls":
                cells.append("%12d" % x)
            elif c.endswith("%"):
                cells.append("%12s" % ("NaN" if x is None else "%.2f%%" % x))
            else:
                cells.append("%12s" % tt.format_time(x))
        out.append("%55s  %s  %s" % (tt.display_name(r.name), "  ".join(cells), r.kind))
    out.append("Self CPU time total: " + tt.format_time(o.self_cpu_total / 1000.0))
    if o.has_device_time:
        out.append("Self CUDA time total: " + tt.format_time(o.self_cuda_total / 1000.0))
    return "\n".join(out)


class Disagreement:
    __slots__ = ("row", "kind", "column", "oracle", "table", "line", "why")

    def __init__(self, row, kind, column, oracle, table, line, why=""):
        self.row, self.kind, self.column = row, kind, column
        self.oracle, self.table, self.line, self.why = oracle, table, line, why

    def __repr__(self):
        return "%s [%s] line %s: %s oracle %s table %s%s" % (
            self.row, self.kind, self.line, self.column, self.oracle, self.table,
            (" (" + self.why + ")") if self.why else "")


class NotJudged:
    """Something of the table the oracle does not judge: rows (line set) or a whole column."""
    __slots__ = ("row", "line", "reason")

    def __init__(self, row, line, reason):
        self.row, self.line, self.reason = row, line, reason

    def __repr__(self):
        return "%s line %s: not judged: %s" % (self.row, self.line, self.reason)


class Comparison:
    def __init__(self):
        self.pairs = []           # (oracle row, table row)
        self.disagreements = []
        self.not_judged = []


def _agree(col, ov, tv, res):
    if col == "# of Calls":
        return ov == tv
    if ov is None or tv is None:
        return ov is None and tv is None
    # Half the printed resolution, plus a hair for binary floating point.
    return abs(ov - tv) <= res / 2 + 1e-9 * max(1.0, abs(ov))


def _row_mismatch(o, orow, trow, columns):
    ov = row_values(o, orow)
    bad = []
    for c in columns:
        if c not in trow.cells or c not in ov:
            continue
        text = trow.cells[c].strip()
        if c == "CPU total %" and (orow.is_async or text == ASYNC_SHARE):
            if orow.is_async != (text == ASYNC_SHARE):
                bad.append((c, ASYNC_SHARE if orow.is_async else ov[c], text))
            continue
        try:
            tv, res = tt.table_cell(c, text)
        except ValueError:
            bad.append((c, ov[c], text))
            continue
        if not _agree(c, ov[c], tv, res):
            bad.append((c, ov[c], text))
    return bad


def expected_columns(o, table, opts, legacy=False):
    """P6's header for this oracle and call. What the trace cannot tell is taken from the table:
    profile_memory (CPU Mem), with_stack (Source Location), the FLOPs header's unit, the legacy
    profiler's device columns."""
    cols = ["Name"]
    if opts.group_by_overload_name:
        cols.append("Overload Name")
    cols += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if o.has_device_time or legacy:
        cols += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if "CPU Mem" in table.columns:
        cols += ["CPU Mem", "Self CPU Mem"]
        if o.has_device_mem:
            cols += ["CUDA Mem", "Self CUDA Mem"]
    cols.append("# of Calls")
    if o.has_input_shapes:
        cols.append("Input Shapes")
    cols += [c for c in table.columns if c == "Source Location"]
    cols += [c for c in table.columns if c.startswith("Total ") and c.endswith("FLOPs")]
    return cols


def shown_rows(o, opts, n_table_rows=None):
    """{id(row): 'must' | 'may' | 'not'}: which oracle rows PyTorch prints (P6). Rows are
    sorted stably by the key, descending; top_level_events_only skips rows whose first event
    has a CPU parent; row_limit counts printed rows. A row tied on the sort value with the
    last printed one may be either side of the cut (PyTorch sums floats: ties are not
    reproducible); with a sort value the oracle does not know, every row above the cut may be.
    row_limit None: not known (a table without its call); then a table with fewer rows than
    the oracle may have been cut anywhere."""
    cand = [r for r in o.sorted_rows(opts.sort_by)
            if not (opts.top_level_events_only and not r.top_level)]
    out = {id(r): "not" for r in o.rows}
    limit = opts.row_limit
    if limit is None:
        cut = n_table_rows is not None and n_table_rows < len(cand)
        for r in cand:
            out[id(r)] = "may" if cut else "must"
        return out
    if limit < 0 or limit >= len(cand):
        for r in cand:
            out[id(r)] = "must"
        return out
    if opts.sort_by is None:           # key_averages' own order: no ties
        for r in cand[:limit]:
            out[id(r)] = "must"
        return out
    key = o.sort_value(opts.sort_by)
    if key is None:
        for r in cand:
            out[id(r)] = "may"
        return out
    v = key(cand[limit - 1])
    for r in cand:
        kv = key(r)
        out[id(r)] = "must" if kv > v else ("may" if kv == v else "not")
    return out


_RANK = {"must": 0, "may": 1, "not": 2}


def compare(o, table, opts=None):
    """Compares a parsed table (table_text.parse_table) with the oracle derived with the
    call's grouping (key_averages.derive(..., group_by_input_shapes=...)) for the call's
    options (table_text.Options; None: PyTorch's defaults with the row limit unknown).

    Rows are keyed as PyTorch prints them: the name cut to max_name_column_width and, with an
    Input Shapes column, the cut shapes cell. Several rows of one key (an annotation's CPU and
    GPU-span rows, names with one prefix) are paired to minimise the disagreeing cells, rows
    PyTorch prints first. Returns a Comparison (pairs, disagreements, not_judged)."""
    if opts is None:
        opts = tt.Options(row_limit=None)
    res = Comparison()
    dis, nj = res.disagreements, res.not_judged

    if opts.group_by_stack_n and "Source Location" in table.columns:
        for tr in table.rows:
            nj.append(NotJudged(tr.name, tr.line, NJ_STACK))
        return res
    # Without a Source Location column every event's stack was empty (P6's has_stack is over
    # all rows), so group_by_stack_n grouped by name alone: judged like a plain table.
    if opts.group_by_overload_name:
        for tr in table.rows:
            nj.append(NotJudged(tr.name, tr.line, NJ_OVERLOAD))
        return res

    legacy = legacy_device_columns(o, table)
    if legacy:
        nj.append(NotJudged("(columns %s)" % ", ".join(DEVICE_COLUMNS), None, NJ_LEGACY))
    want = expected_columns(o, table, opts, legacy)
    if want != table.columns:
        dis.append(Disagreement("(columns)", "", "header", " | ".join(want),
                                " | ".join(table.columns), None, "PyTorch's columns differ"))
    if opts.header is not None and opts.header not in table.preamble:
        dis.append(Disagreement("(header)", "", "header", opts.header, table.preamble, None))
    if opts.top_level_events_only and TOP_LEVEL_LINE not in table.preamble:
        dis.append(Disagreement("(header)", "", "top-level line", TOP_LEVEL_LINE,
                                table.preamble, None))
    flops_cols = [c for c in table.columns if c.startswith("Total ") and c.endswith("FLOPs")]
    if flops_cols and any(r.flops is None for r in o.rows):
        nj.append(NotJudged("(column %s)" % flops_cols[0], None, NJ_FLOPS))

    width = opts.max_name_column_width
    with_shapes = "Input Shapes" in table.columns
    shapes_w = None
    if with_shapes:
        shapes_w = max(len(tt.shapes_text(r.shapes)) for r in o.rows) + 4
        if opts.max_shapes_column_width is not None:
            shapes_w = min(shapes_w, opts.max_shapes_column_width)

    def key_of_oracle(r):
        k = tt.display_name(r.name, width)
        if with_shapes:
            return (k, tt.shapes_text(r.shapes)[:shapes_w].rstrip())
        return (k,)

    def key_of_table(tr):
        name = tr.name
        if ka.kineto_renames(name) and name not in names:
            name = ka.RENAMED   # K2: its events are the trace's "unknown" ones
        if with_shapes:
            return (name, tr.cells.get("Input Shapes", "").rstrip())
        return (name,)

    shown = shown_rows(o, opts, len(table.rows))
    if opts.row_limit is not None and opts.row_limit >= 0 and \
            o.sort_value(opts.sort_by) is None and opts.sort_by is not None:
        nj.append(NotJudged("(rows)", None, NJ_CUT % opts.sort_by))
    columns = [c for c in COMPARED if c in table.columns and not (legacy and c in DEVICE_COLUMNS)]
    names = {tt.display_name(r.name, width) for r in o.rows}
    by_key = {}
    for r in o.rows:
        by_key.setdefault(key_of_oracle(r), []).append(r)
    tby_key = {}
    for tr in table.rows:
        tby_key.setdefault(key_of_table(tr), []).append(tr)

    for k, trs in tby_key.items():
        ors = by_key.get(k, [])
        # every (table row, oracle row) of this key by cost; greedily the cheapest first
        costs = []
        for i, tr in enumerate(trs):
            for j, r in enumerate(ors):
                bad = _row_mismatch(o, r, tr, columns)
                costs.append((len(bad), _RANK[shown[id(r)]], tr.line, j, i, bad))
        costs.sort(key=lambda c: c[:4])
        used_t, used_o = set(), set()
        for n, rank, _, j, i, bad in costs:
            if i in used_t or j in used_o:
                continue
            used_t.add(i)
            used_o.add(j)
            tr, r = trs[i], ors[j]
            res.pairs.append((r, tr))
            if tr.name != r.name and key_of_table(tr)[0] == ka.RENAMED:
                dis.append(Disagreement(tr.name, r.kind, "Name", ka.RENAMED, tr.name, tr.line, WHY_RENAMED))
            async_unknown = (not r.is_async and "CPU total %" in tr.cells
                             and tr.cells["CPU total %"].strip() == ASYNC_SHARE)
            if async_unknown:
                nj.append(NotJudged(tr.name, tr.line, NJ_ASYNC))
                continue
            if shown[id(r)] == "not":
                dis.append(Disagreement(tr.name, r.kind, "row", "not printed", "present",
                                        tr.line, "PyTorch's row_limit / top_level_events_only "
                                        "would not print this row"))
            for c, ov, tv in bad:
                dis.append(Disagreement(tr.name, r.kind, c, ov, tv, tr.line))
        for i, tr in enumerate(trs):
            if i not in used_t:
                dis.append(Disagreement(tr.name, "?", "row", "absent", "present", tr.line,
                                        "no trace events give this row"))
    paired = {id(r) for r, _ in res.pairs}
    for r in o.sorted_rows(opts.sort_by):
        if id(r) not in paired and shown[id(r)] == "must":
            dis.append(Disagreement(key_of_oracle(r)[0], r.kind, "row", "present", "absent",
                                    None, "the table has no such row"))
    if table.self_cpu_total is not None:
        v, rs = table.self_cpu_total
        if not _agree("t", o.self_cpu_total / 1000.0, v, rs):
            dis.append(Disagreement("(total)", "", "Self CPU time total",
                                    o.self_cpu_total / 1000.0, v, None))
    if table.self_cuda_total is not None and not legacy:
        v, rs = table.self_cuda_total
        if not _agree("t", o.self_cuda_total / 1000.0, v, rs):
            dis.append(Disagreement("(total)", "", "Self CUDA time total",
                                    o.self_cuda_total / 1000.0, v, None))
    return res


def check_files(trace_path, table_path, call=None, **kw):
    """(oracle, table, comparison) of one trace and one table printed by `call` (text)."""
    opts = tt.parse_call(call) if call else None
    o = ka.derive(trace_path, group_by_input_shapes=bool(opts and opts.group_by_input_shape),
                  **kw)
    with open(table_path, encoding="utf-8") as f:
        t = tt.parse_table(f.read())
    return o, t, compare(o, t, opts)


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    call = argv[3] if len(argv) > 3 else None
    o, t, c = check_files(argv[1], argv[2], call)
    opts = tt.parse_call(call) if call else tt.Options()
    print(render(o, opts.sort_by))
    bad_rows = {(d.row, d.kind) for d in c.disagreements}
    print("\n%d table rows, %d matched, %d disagreements in %d rows, %d not judged" %
          (len(t.rows), len(c.pairs), len(c.disagreements), len(bad_rows), len(c.not_judged)))
    for d in c.disagreements:
        print("  " + repr(d))
    for n in c.not_judged:
        print("  " + repr(n))
    return 1 if c.disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
