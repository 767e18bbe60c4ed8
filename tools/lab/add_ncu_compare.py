#!/usr/bin/env python3
"""Nsight Compute's view of crossbench's add against PyTorch's (issue 19): per metric ours,
PyTorch's and the difference, from the probe's reports; and the two kernels' SASS side by side.

  add_ncu_compare.py compare --manifest probe.json --raw A.csv [--raw B.csv ...] [--diff-pct 2] [--top 40]
  add_ncu_compare.py sass --match REGEX CUOBJDUMP.txt      # the functions of `cuobjdump -sass` whose name matches
  add_ncu_compare.py opcodes NAME=FILE [NAME=FILE ...]     # opcode counts per kernel, side by side

compare: each --raw is `ncu --import REPORT --page raw --csv --print-units base` of one ncu run of
tools/lab/add_ncu_probe.py (several runs with different sections: their columns are joined kernel by
kernel, the kernel names must agree). The kernels, in ncu's ID order (launch order), are assigned
to the manifest's blocks (each side's K calls per size), checked by count and by side (our add
kernels, PyTorch's elementwise kernel). Per block the value of a metric is the mean over its calls
but the first (which follows another side's kernel; all K when K = 1). Per size: a table of the
metrics that tell the kernels apart (duration, instructions, launch shape and occupancy, issue and
eligible warps, stall reasons in cycles per issued instruction, DRAM and L2 bytes, L1 sectors per
request), PyTorch's value, then each of our configurations' with its difference in % of
PyTorch's; then every metric ncu collected where the first configuration differs from PyTorch's
by more than --diff-pct (largest first, at most --top). Markdown on stdout.

sass: prints the functions (`Function : name` to the next function) whose name matches REGEX
(Python re.search; demangle first with c++filt to match template arguments).

opcodes: FILE is either `cuobjdump -sass` text (every function in it, e.g. sass's output) or
`ncu --import REPORT --page source --print-source sass --csv` (one kernel's source page; its
"Instructions Executed" column, where present, gives executed warp instructions per opcode).
Prints, per opcode (with its modifiers: LDG.E.128.CONSTANT), the static count in each kernel and
the executed counts, so that the instruction difference reads in one table.

Exit 0; 2 when an input is unreadable or does not match the manifest (one line on stderr).
"""
import argparse
import csv
import io
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_vs_torch as avt  # noqa: E402  OUR_KERNELS, kernel_side

# (metric, what it is): the rows of the per-size table, in this order, where either side has them.
METRICS = [
    ("gpu__time_duration.sum", "duration, ns"),
    ("gpc__cycles_elapsed.max", "cycles elapsed (GPC, max)"),
    ("sm__cycles_active.avg", "SM active cycles (mean over SMs)"),
    ("smsp__inst_executed.sum", "warp instructions executed"),
    ("smsp__thread_inst_executed.sum", "thread instructions executed"),
    ("launch__grid_size", "grid size, blocks"),
    ("launch__block_size", "block size, threads"),
    ("launch__registers_per_thread", "registers per thread"),
    ("launch__waves_per_multiprocessor", "waves per SM"),
    ("sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy, %"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy, %"),
    ("smsp__issue_active.avg.per_cycle_active", "issue slots busy per active cycle (per scheduler)"),
    ("smsp__warps_active.avg.per_cycle_active", "active warps per scheduler"),
    ("smsp__warps_eligible.avg.per_cycle_active", "eligible warps per scheduler"),
    ("smsp__average_warp_latency_per_inst_issued.ratio", "warp cycles per issued instruction"),
    ("dram__bytes_read.sum", "DRAM bytes read"),
    ("dram__bytes_write.sum", "DRAM bytes written"),
    ("lts__t_bytes.sum", "L2 bytes (all requests)"),
    ("lts__t_sector_hit_rate.pct", "L2 sector hit rate, %"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "L1 global load requests"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "L1 global load sectors"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "L1 global store requests"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "L1 global store sectors"),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput, % of peak"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput, % of peak"),
]
# Derived rows: (label, numerator, denominator).
RATIOS = [
    ("L1 sectors per request, global loads", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
     "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    ("L1 sectors per request, global stores", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
     "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
]
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")


class InputError(Exception):
    """An unreadable input or one that does not fit the manifest: one line, exit 2."""


def number(text):
    """A CSV cell as a float (thousands separators dropped), or None when it is not a number."""
    try:
        x = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def read_raw(path):
    """`ncu --page raw --csv`: a header row ("ID", ..., "Kernel Name", ..., one column per metric),
    a row of units, then a row per profiled kernel. Returns [{"id", "name", "metrics": {metric:
    float}}] in ID order, metrics being the numeric columns whose name has "__" (ncu's metric
    names; Process ID, Context and the like have none). counters_vs_ncu.py reads the details page
    (one row per metric), a different layout."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    start = text.find('"ID"')
    if start < 0:
        raise InputError(f"{path}: no ncu CSV header (\"ID\", ...); its end: {text[-200:]!r}")
    rows = list(csv.reader(io.StringIO(text[start:])))
    head = rows[0]
    if "Kernel Name" not in head:
        raise InputError(f"{path}: the header has no \"Kernel Name\" column")
    i_id, i_name = head.index("ID"), head.index("Kernel Name")
    kernels = []
    for r in rows[1:]:
        if len(r) != len(head) or not r[i_id].strip().isdigit():
            continue  # the units row, ncu's own messages
        metrics = {h: x for h, v in zip(head, r) if "__" in h and (x := number(v)) is not None}
        kernels.append({"id": int(r[i_id]), "name": r[i_name], "metrics": metrics})
    if not kernels:
        raise InputError(f"{path}: no kernel rows")
    return sorted(kernels, key=lambda k: k["id"])


def join_runs(runs, paths):
    """Joins the metric columns of several ncu runs of the same probe, kernel by kernel."""
    first = runs[0]
    for run, path in zip(runs[1:], paths[1:]):
        if len(run) != len(first):
            raise InputError(f"{path}: {len(run)} kernels, {paths[0]} has {len(first)}")
        for k0, k in zip(first, run):
            if k0["name"] != k["name"]:
                raise InputError(f"{path}: kernel {k['id']} is {k['name'][:80]}, in {paths[0]} {k0['name'][:80]}")
            k0["metrics"] = {**k["metrics"], **k0["metrics"]}
    return first


def side_of(name):
    """'ours' or 'torch' for a kernel name as ncu prints it (demangled, or the function name only)."""
    side = avt.kernel_side(name)
    if side:
        return side
    if any(k in name for k in avt.OUR_KERNELS):
        return "ours"
    if "elementwise_kernel" in name:
        return "torch"
    return None


def assign(kernels, blocks):
    """{(n, label): [metrics per call]} from the kernels in launch order and the manifest's blocks."""
    want = sum(b["calls"] for b in blocks)
    if len(kernels) != want:
        raise InputError(f"{len(kernels)} profiled kernels, the manifest's {len(blocks)} blocks launch {want}")
    out, i = {}, 0
    for b in blocks:
        part = kernels[i:i + b["calls"]]
        wrong = [k["name"] for k in part if side_of(k["name"]) != b["side"]]
        if wrong:
            raise InputError(f"block {b['label']} n={b['n']} ({b['side']}, kernels from {i}): {len(wrong)} of "
                             f"another side, e.g. {wrong[0][:100]}")
        out[(b["n"], b["label"])] = [k["metrics"] for k in part]
        i += b["calls"]
    return out


def block_means(calls):
    """Per metric: the mean over the block's calls but the first (all of them when there is one)."""
    use = calls[1:] if len(calls) > 1 else calls
    names = set().union(*(c.keys() for c in use))
    return {m: sum(c[m] for c in use if m in c) / sum(1 for c in use if m in c) for m in names}


def with_ratios(means):
    for label, num, den in RATIOS:
        if means.get(den):
            means[label] = means.get(num, 0.0) / means[den]
    return means


def diff_pct(ours, theirs):
    if ours is None or theirs is None:
        return None
    if theirs == 0:
        return 0.0 if ours == 0 else None
    return (ours - theirs) / theirs * 100.0


def cell(x):
    if x is None:
        return "-"
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.4g}"
    return f"{x:.4f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"


def pct(x):
    return "-" if x is None else f"{x:+.2f}"


def compare(manifest, raws, diff_limit, top, replay="application"):
    runs = [read_raw(p) for p in raws]
    kernels = join_runs(runs, raws)
    means = {key: with_ratios(block_means(calls)) for key, calls in assign(kernels, manifest["blocks"]).items()}
    ours = manifest["configs"]
    k = manifest["calls"]
    md = [f"# Nsight Compute: crossbench's add against PyTorch's {manifest.get('torch', '')}, "
          f"{manifest['dtype']}, {manifest.get('gpu', '')}\n",
          f"tools/lab/add_ncu_probe.py under ncu ({replay} replay, --cache-control none --clock-control none): "
          f"per size, each side's {k} back-to-back calls, same inputs, one process; each value the mean over a "
          f"side's calls but the first ({max(k - 1, 1)} kernels). diff %: ours against PyTorch's, in % of PyTorch's. "
          f"Reports: {', '.join(os.path.basename(p) for p in raws)}.\n"]
    for n in manifest["sizes"]:
        theirs = means[(n, avt.TORCH)]
        mine = [means[(n, c)] for c in ours]
        rows = [(m, what) for m, what in METRICS]
        rows += [(label, label) for label, _, _ in RATIOS]
        stalls = sorted({m for side in [theirs] + mine for m in side if STALL.match(m)})
        rows += [(m, "stall " + STALL.match(m).group(1) + ", cycles per issued instruction") for m in stalls]
        md += [f"## n = {n} ({n}^2 = {n * n} elements)\n",
               "| metric | PyTorch | " + " | ".join(f"{c} | diff %" for c in ours) + " |",
               "| --- | ---: |" + " ---: | ---: |" * len(ours)]
        for m, what in rows:
            vals = [side.get(m) for side in mine]
            if theirs.get(m) is None and all(v is None for v in vals):
                continue
            if m.startswith("smsp__average_warps_issue_stalled") and max([theirs.get(m) or 0] + [v or 0 for v in vals]) < 0.01:
                continue  # a stall reason neither side shows
            name = what if what == m else f"{what} (`{m}`)"
            md.append(f"| {name} | {cell(theirs.get(m))} | "
                      + " | ".join(f"{cell(v)} | {pct(diff_pct(v, theirs.get(m)))}" for v in vals) + " |")
        first = mine[0]
        big = []
        for m in sorted(set(first) & set(theirs)):
            d = diff_pct(first[m], theirs[m])
            if d is not None and abs(d) > diff_limit:
                big.append((abs(d), m, d))
        big.sort(reverse=True)
        md += ["", f"Every metric ncu collected where {ours[0]} differs from PyTorch's by more than {diff_limit:g}% "
               f"({len(big)}; the {min(top, len(big))} largest):", "",
               f"| metric | PyTorch | {ours[0]} | diff % |", "| --- | ---: | ---: | ---: |"]
        md += [f"| `{m}` | {cell(theirs[m])} | {cell(first[m])} | {pct(d)} |" for _, m, d in big[:top]]
        md.append("")
    return "\n".join(md) + "\n"


# ---- SASS ---------------------------------------------------------------------------------------

FUNCTION = re.compile(r"^\s*Function : (.+?)\s*$")
CUOBJDUMP_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.+?)\s*;")


def cuobjdump_functions(text):
    """{function name: [its lines]} of `cuobjdump -sass` text, in order: from its `Function :`
    line to the `..........` line that ends it (blank lines dropped)."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = [line]
        elif cur is not None and line.strip():
            funcs[cur].append(line)
            if line.strip().startswith(".........."):
                cur = None
    return funcs


def opcode(instruction):
    """The opcode with its modifiers of a SASS instruction ("@!P0 LDG.E.128 R4, ..." -> LDG.E.128)."""
    parts = [p for p in instruction.replace("{", " ").replace("}", " ").split() if not p.startswith("@")]
    return parts[0] if parts else None


def ncu_source_kernels(text):
    """`ncu --page source --print-source sass --csv`: {kernel: [(instruction, executed or None)]}, one
    entry per table (a header row with "Source"; its kernel named by a preceding row that names one,
    else numbered)."""
    out, name, head, key = {}, None, None, None
    for r in csv.reader(io.StringIO(text)):
        if not r:
            continue
        if "Source" in r and ("Address" in r or "# Address" in r):
            head = r
            key = name or f"kernel {len(out) + 1}"
            out[key] = []
            name = None
            continue
        if head is None or len(r) != len(head):
            if len(r) >= 2 and r[0].strip() in ("Kernel Name", "Function Name", "Kernel"):
                name, head = r[1].strip(), None
            continue
        row = dict(zip(head, r))
        out[key].append((row["Source"].strip(), number(row.get("Instructions Executed", "") or "")))
    return out


def opcode_tables(named_files):
    """Markdown: per opcode the static count in each kernel, then the executed counts where known."""
    kernels = {}  # column -> {opcode: [static, executed or None]}
    for name, path in named_files:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: {e.strerror}")
        if re.search(r"^\s*Function : ", text, re.M):
            found = {fn: [(m.group(1), None) for line in lines if (m := CUOBJDUMP_INSTRUCTION.search(line))]
                     for fn, lines in cuobjdump_functions(text).items()}
        else:
            found = ncu_source_kernels(text)
        found = {k: v for k, v in found.items() if v}
        if not found:
            raise InputError(f"{path}: no SASS found (neither cuobjdump -sass text nor an ncu source page)")
        for fn, instructions in found.items():
            col = name if len(found) == 1 else f"{name}: {fn[:60]}"
            counts = {}
            for text_, executed in instructions:
                op = opcode(text_)
                if op is None:
                    continue
                c = counts.setdefault(op, [0, None])
                c[0] += 1
                if executed is not None:
                    c[1] = (c[1] or 0) + executed
            kernels[col] = counts
    cols = list(kernels)
    ops = sorted(set().union(*(k.keys() for k in kernels.values())))
    md = ["| opcode | " + " | ".join(cols) + " |", "| --- |" + " ---: |" * len(cols)]
    for op in ops:
        md.append(f"| {op} | " + " | ".join(str(kernels[c].get(op, [0])[0]) for c in cols) + " |")
    md.append("| **static instructions** | " + " | ".join(str(sum(v[0] for v in kernels[c].values())) for c in cols) + " |")
    with_exec = [c for c in cols if any(v[1] is not None for v in kernels[c].values())]
    if with_exec:
        md += ["", "Executed warp instructions per opcode (ncu source page, the profiled launch):", "",
               "| opcode | " + " | ".join(with_exec) + " |", "| --- |" + " ---: |" * len(with_exec)]
        for op in ops:
            md.append(f"| {op} | " + " | ".join(cell(kernels[c].get(op, [0, None])[1]) for c in with_exec) + " |")
        md.append("| **executed** | " + " | ".join(cell(sum(v[1] or 0 for v in kernels[c].values())) for c in with_exec) + " |")
    return "\n".join(md) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--manifest", required=True)
    c.add_argument("--raw", action="append", required=True)
    c.add_argument("--diff-pct", type=float, default=2.0)
    c.add_argument("--top", type=int, default=40)
    c.add_argument("--replay", choices=("application", "kernel"), default="application",
                   help="ncu's --replay-mode of the reports, as the header states it")
    s = sub.add_parser("sass")
    s.add_argument("--match", required=True)
    s.add_argument("file")
    o = sub.add_parser("opcodes")
    o.add_argument("files", nargs="+", help="NAME=FILE")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "compare":
            try:
                with open(a.manifest) as f:
                    manifest = json.load(f)
            except (OSError, ValueError) as e:
                raise InputError(f"{a.manifest}: not readable: {e}")
            sys.stdout.write(compare(manifest, a.raw, a.diff_pct, a.top, a.replay))
        elif a.cmd == "sass":
            try:
                with open(a.file, errors="replace") as f:
                    funcs = cuobjdump_functions(f.read())
                pattern = re.compile(a.match)
            except (OSError, re.error) as e:
                raise InputError(f"sass: {e}")
            hits = [lines for name, lines in funcs.items() if pattern.search(name)]
            if not hits:
                raise InputError(f"{a.file}: no function matches {a.match!r} ({len(funcs)} functions)")
            sys.stdout.write("\n\n".join("\n".join(lines) for lines in hits) + "\n")
        else:
            named = []
            for item in a.files:
                name, sep, path = item.partition("=")
                if not sep or not name or not path:
                    raise InputError(f"opcodes: '{item}' is not NAME=FILE")
                named.append((name, path))
            sys.stdout.write(opcode_tables(named))
    except InputError as e:
        print(f"add_ncu_compare.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
