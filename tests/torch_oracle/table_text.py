"""The text side of PyTorch's ``key_averages().table()``, for the oracle (key_averages.py):
the options of one table call, how PyTorch formats names, times, shares and memory, and how the
printed table is read back. Plain Python, no torch, no code shared with the C++ validator.

PyTorch 2.11 sources (read, not copied):
  P6  torch/autograd/profiler_util.py   _build_table, _format_time, _format_time_share, _format_memory
  P8  torch/autograd/profiler_util.py   EventList.table (defaults), EventList.key_averages
  P9  torch/profiler/profiler.py         _KinetoProfile.key_averages (group_by_input_shape ->
                                         group_by_input_shapes)
"""

import ast
import re


# --------------------------------------------------------------------------------------------
# The options of one table call
# --------------------------------------------------------------------------------------------

class Options:
    """The arguments of ``prof.key_averages(...).table(...)`` with PyTorch's defaults (P8:
    sort_by None = key_averages' order, row_limit 100, max_name_column_width 55,
    max_shapes_column_width 80, max_src_column_width 75, header None, top_level_events_only
    False, time_unit None; key_averages: group_by_input_shape False, group_by_stack_n 0,
    group_by_overload_name False)."""

    def __init__(self, **kw):
        self.sort_by = None
        self.row_limit = 100
        self.max_name_column_width = 55
        self.max_shapes_column_width = 80
        self.max_src_column_width = 75
        self.header = None
        self.top_level_events_only = False
        self.time_unit = None
        self.group_by_input_shape = False
        self.group_by_stack_n = 0
        self.group_by_overload_name = False
        for k, v in kw.items():
            if not hasattr(self, k):
                raise ValueError("unknown table option %r" % k)
            setattr(self, k, v)

    def __repr__(self):
        return "Options(%s)" % ", ".join("%s=%r" % kv for kv in sorted(vars(self).items()))


# P9: the profiler's key_averages spells it group_by_input_shape, EventList's
# group_by_input_shapes; both mean the same.
_ALIASES = {"group_by_input_shapes": "group_by_input_shape"}


def parse_call(call):
    """Options from the text of the call that printed the table, e.g.
    "prof.key_averages(group_by_input_shape=True).table(sort_by='count', row_limit=-1)"
    (tools/lab/torch_matrix/record.py writes it into each export's meta.json). Only keyword
    arguments with literal values are read; anything else raises ValueError."""
    if not call:
        return Options()
    tree = ast.parse(call.strip(), mode="eval").body
    kw = {}
    node = tree
    while isinstance(node, ast.Call):
        for k in node.keywords:
            if k.arg is None:
                raise ValueError("**kwargs in %r" % call)
            kw[_ALIASES.get(k.arg, k.arg)] = ast.literal_eval(k.value)
        f = node.func
        node = f.value if isinstance(f, ast.Attribute) else None
    return Options(**kw)


def options_from_kwargs(key_averages_kw, table_kw):
    """Options from the keyword dictionaries of tests/torch_oracle/data/cpu-tables/index.json."""
    kw = {_ALIASES.get(k, k): v for k, v in dict(key_averages_kw or {}).items()}
    kw.update(table_kw or {})
    return Options(**kw)


# --------------------------------------------------------------------------------------------
# Formatting, as P6
# --------------------------------------------------------------------------------------------

DEFAULT_NAME_WIDTH = 55


def display_name(name, width=DEFAULT_NAME_WIDTH):
    """P6: a name of width - 3 characters or more prints as its first width - 3 and '...'
    (no cut when max_name_column_width is None)."""
    if width is not None and len(name) >= width - 3:
        return name[:width - 3] + "..."
    return name


NAME_CUT = DEFAULT_NAME_WIDTH - 3


def format_time(us):
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


def format_share(us, total_us):
    if total_us == 0:
        return "NaN"
    return "%.2f%%" % (us * 100.0 / total_us)


def format_memory(nbytes):
    kb, mb, gb = 1024, 1024 * 1024, 1024 ** 3
    if abs(nbytes) >= gb:
        return "%.2f GB" % (nbytes / gb)
    if abs(nbytes) >= mb:
        return "%.2f MB" % (nbytes / mb)
    if abs(nbytes) >= kb:
        return "%.2f KB" % (nbytes / kb)
    return "%d B" % nbytes


def shapes_text(shapes):
    """P5/P6: the Input Shapes key and cell are str() of the event's shapes, a list of lists of
    ints as Python prints it."""
    return str(shapes)


# --------------------------------------------------------------------------------------------
# Reading a key_averages().table() text
# --------------------------------------------------------------------------------------------

class TableRow:
    __slots__ = ("name", "cells", "line", "stack")

    def __init__(self, name, cells, line):
        self.name, self.cells, self.line = name, cells, line
        self.stack = []   # Source Location continuation lines (group_by_stack_n, with_stack)


class Table:
    def __init__(self):
        self.columns = []
        self.rows = []
        self.preamble = []             # lines above the first dashed line (header=, top-level)
        self.self_cpu_total = None     # (value_us, resolution_us)
        self.self_cuda_total = None


_TIME = re.compile(r"^(-?\d+(?:\.(\d+))?)(ns|us|ms|s)$")
_MEM = re.compile(r"^(-?\d+(?:\.(\d+))?) (B|KB|MB|GB)$")
_SCALE_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
_SCALE_B = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def parse_time(text):
    """'1.234ms' -> (1234.0, 1.0): value and printed resolution, in microseconds."""
    m = _TIME.match(text.strip())
    if not m:
        raise ValueError("not a time: %r" % text)
    scale = _SCALE_US[m.group(3)]
    decimals = len(m.group(2) or "")
    return float(m.group(1)) * scale, scale * 10.0 ** -decimals


def parse_share(text):
    t = text.strip()
    if t == "NaN":
        return None, 0.0
    if not t.endswith("%"):
        raise ValueError("not a percentage: %r" % text)
    num = t[:-1]
    decimals = len(num.split(".")[1]) if "." in num else 0
    return float(num), 10.0 ** -decimals


def parse_memory(text):
    m = _MEM.match(text.strip())
    if not m:
        raise ValueError("not a memory size: %r" % text)
    scale = _SCALE_B[m.group(3)]
    decimals = len(m.group(2) or "")
    return float(m.group(1)) * scale, scale * 10.0 ** -decimals


def _tokens(line):
    """Cells of a table line: runs of text separated by two spaces or more (P6 pads every
    column and puts two spaces after it; names and memory sizes hold single spaces only)."""
    return [(m.start(), m.group(0)) for m in re.finditer(r"\S+(?: \S+)*", line)]


def _positional(line, spans):
    """The cells of a data line by the dashed line's columns, or None where a cell overflows
    its column (P6 pads each cell to its column's width; a data cell is never wider: names are
    cut to the name column, shapes to the shapes column, sources trimmed to theirs)."""
    for _, e in spans[:-1]:
        if line[e:e + 2].strip():
            return None
    return [line[s:e].strip() for s, e in spans[:-1]] + [line[spans[-1][0]:].strip()]


def parse_table(text):
    """The dashed separator line gives the columns (each run of '-' is one column, P6's
    add_column). Headers can be wider than their column ('CUDA time avg' is 13 characters in a
    12-wide column) and push the rest right, so the header is split at runs of two spaces. Data
    lines are cut at the dashed line's columns (P6 pads every cell to its column); a line whose
    cell overflows is split at runs of two spaces from the right (the last cells are the
    values, the rest is the name). A line with an empty name and only a Source Location is a
    continuation of the row above (P6 prints stack frames 2..n so, then an empty line)."""
    lines = text.splitlines()
    seps = [i for i, l in enumerate(lines) if l.strip() and set(l.strip()) <= {"-", " "}]
    if len(seps) < 3:
        raise ValueError("not a key_averages() table (fewer than three separator lines)")
    spans = [m.span() for m in re.finditer(r"-+", lines[seps[0]])]
    ncol = len(spans)
    t = Table()
    t.preamble = [l for l in lines[:seps[0]] if l.strip() and set(l.strip()) != {"="}]
    t.columns = [tok for _, tok in _tokens(lines[seps[0] + 1])]
    if len(t.columns) != ncol:
        raise ValueError("header has %d names for %d columns" % (len(t.columns), ncol))
    for i in range(seps[1] + 1, seps[2]):
        line = lines[i]
        if not line.strip():
            continue   # the empty line after a row's stack frames
        cells = _positional(line, spans)
        if cells is None:
            toks = _tokens(line)
            if len(toks) < ncol:
                raise ValueError("line %d: %d cells for %d columns" % (i + 1, len(toks), ncol))
            values = toks[len(toks) - (ncol - 1):]
            cells = [line[:values[0][0]].strip()] + [v for _, v in values]
        if not any(cells[:-1]) and t.rows:
            t.rows[-1].stack.append(cells[-1])
            continue
        t.rows.append(TableRow(cells[0], dict(zip(t.columns[1:], cells[1:])), i + 1))
    for line in lines[seps[2] + 1:]:
        if line.startswith("Self CPU time total:"):
            t.self_cpu_total = parse_time(line.split(":", 1)[1])
        elif re.match(r"^Self \w+ time total:", line):
            t.self_cuda_total = parse_time(line.split(":", 1)[1])
    return t


def table_cell(col, text):
    """(value, resolution) in the oracle's units, or (None, 0) for NaN."""
    if col == "# of Calls":
        return int(text), 0
    if col.endswith("%"):
        return parse_share(text)
    if col.endswith("Mem"):
        return parse_memory(text)
    return parse_time(text)
