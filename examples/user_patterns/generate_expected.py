#!/usr/bin/env python3
"""Expands examples/user_patterns/patterns.json (the corpus's one table) into expected.json (every
pattern x mode x language, and the mixed runs, with the outcome crossbench must give and how it is
recognised) and README.md's table. Pure Python, no GPU, no build.

    python3 examples/user_patterns/generate_expected.py            rewrite expected.json and README.md's table
    python3 examples/user_patterns/generate_expected.py --check    exit 1 when either is stale (the GPU test runs this)

Exit 0: written (or current); 1: stale (--check); 2: patterns.json is malformed (one line per problem).
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "patterns.json")
EXPECTED = os.path.join(HERE, "expected.json")
README = os.path.join(HERE, "README.md")
BEGIN = "<!-- BEGIN patterns table: generated from patterns.json by generate_expected.py; do not edit -->"
END = "<!-- END patterns table -->"

OUTCOMES = ("pass", "refused", "refused_graph", "uncapturable", "fault", "hang")
EXIT_CODES = {"pass": [0], "refused": [1], "refused_graph": [1], "uncapturable": [1, 2], "fault": [1], "hang": [1]}
WHERE = ("legacy default stream", "per-thread default stream", "another stream")


class TableError(ValueError):
    pass


def load_table(path=TABLE):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def resolve(table, row, program, mode):
    """The expectation of `row` in `mode` (hot, cold: "eager"; graph: "graph", or the eager one when
    the table says "eager"), with `where` resolved for `program` and `why` spelled out."""
    expect = row["expect"]
    e = expect["eager"] if mode in ("hot", "cold") else expect.get("graph", "eager")
    if e == "eager":
        e = expect["eager"]
    e = copy.deepcopy(e)
    if e.get("outcome") not in OUTCOMES:
        raise TableError(f"{row['name']}: {mode}: unknown outcome {e.get('outcome')!r} ({', '.join(OUTCOMES)})")
    if e["outcome"] == "refused":
        where = e.get("where")
        if where == "default":
            if program is None:
                raise TableError(f"{row['name']}: where 'default' needs a C++ program")
            where = table["programs"][program]["default_stream"]
        if where not in WHERE:
            raise TableError(f"{row['name']}: unknown where {e.get('where')!r} (default, {', '.join(WHERE)})")
        why = table["why_texts"].get(e.get("why"))
        if why is None:
            raise TableError(f"{row['name']}: unknown why {e.get('why')!r} ({', '.join(table['why_texts'])})")
        e["where"], e["why"] = where, why
    return e


def recognise(outcome, e):
    """How a C++ run of one fixture is recognised: the stderr line that starts with `line` ({fixture}
    filled in) and holds `contains`, for every fixture ("each") or the first only ("first": the
    run ends there)."""
    if outcome == "refused":
        return {"line": "bench: fixture failed: {fixture}: refused: ", "contains": [e["where"], e["why"]],
                "fixtures": "each", "validation": {"check": "work_signature", "status": "failed"}}
    if outcome == "refused_graph":
        return {"line": "bench: fixture failed: {fixture}: refused in graph mode: ", "contains": [], "fixtures": "each"}
    if outcome == "uncapturable":
        return {"line": "", "contains": ["graph"], "fixtures": "first"}
    if outcome == "fault":
        return {"line": "bench: {fixture}: device fault: cudaError", "contains": [], "fixtures": "first"}
    if outcome == "hang":
        return {"line": "bench: {fixture}: a call did not finish within", "contains": [], "fixtures": "first"}
    return {"verdict": "PASSED", "fixtures": "each"}


def python_error_text(outcome, e):
    """What a Python RuntimeError must hold (besides the fixture's name)."""
    return {"refused": ["refused: ", e.get("where", ""), e.get("why", "")],
            "refused_graph": ["refused in graph mode:"],
            "fault": ["device fault: cudaError"],
            "hang": ["a call did not finish within"]}.get(outcome, [])


def check_table(table):
    problems = []
    names = set()
    for row in table["patterns"]:
        name = row.get("name", "")
        if not name or name in names:
            problems.append(f"pattern {name!r}: missing or repeated name")
        names.add(name)
        if row.get("language") not in ("cpp", "python"):
            problems.append(f"{name}: language must be cpp or python")
            continue
        for key in ("does", "because", "expect"):
            if not row.get(key):
                problems.append(f"{name}: {key} is missing")
        if row["language"] == "cpp":
            progs = row.get("programs") or []
            if not progs or any(p not in table["programs"] for p in progs):
                problems.append(f"{name}: programs must name {', '.join(table['programs'])}")
        else:
            if "graph" in row.get("expect", {}):
                problems.append(f"{name}: crossbench.bench has no graph mode: no graph expectation")
            progs = [None]
        for m in row.get("quick", []):
            if m not in table["modes"][row["language"]]:
                problems.append(f"{name}: quick mode {m!r} is not a {row['language']} mode")
        for p in progs:
            for m in table["modes"][row["language"]]:
                try:
                    resolve(table, row, p, m)
                except (TableError, KeyError) as err:
                    problems.append(str(err))
    cpp = {r["name"]: r for r in table["patterns"] if r.get("language") == "cpp"}
    for mx in table.get("mixed", []):
        for op in mx["ops"]:
            if op not in cpp or mx["program"] not in cpp[op]["programs"]:
                problems.append(f"{mx['name']}: {op} is not a pattern of {mx['program']}")
    if problems:
        raise TableError("\n".join(problems))


def expand(table):
    """expected.json's document."""
    check_table(table)
    cases = []
    for row in table["patterns"]:
        lang = row["language"]
        programs = row["programs"] if lang == "cpp" else [None]
        for program in programs:
            for mode in table["modes"][lang]:
                e = resolve(table, row, program, mode)
                outcome = e["outcome"]
                case = {"id": f"{program or 'python'}/{row['name']}/{mode}", "language": lang,
                        "pattern": row["name"], "mode": mode, "expected": outcome,
                        "sync": e.get("sync"), "quick": mode in row.get("quick", []), "because": row["because"]}
                if outcome == "refused":
                    case["where"], case["why"] = e["where"], e["why"]
                if lang == "cpp":
                    case["program"] = program
                    case["args"] = ["--op", row["name"]] + (["--graph"] if mode == "graph" else ["--mode", mode])
                    case["env"] = row.get("env", {})
                    case["exit_codes"] = EXIT_CODES[outcome]
                    case["recognise"] = recognise(outcome, e)
                else:
                    case["raises"] = "RuntimeError" if outcome != "pass" else None
                    case["error_contains"] = python_error_text(outcome, e)
                    case["requires"] = row.get("requires")
                    case["isolated"] = bool(row.get("isolated"))
                    case["handed"] = row.get("handed", "current")
                cases.append(case)
    cpp = {r["name"]: r for r in table["patterns"] if r["language"] == "cpp"}
    mixed = []
    for mx in table.get("mixed", []):
        m = {"id": f"{mx['program']}/{mx['name']}/{mx['mode']}", "language": "cpp", "pattern": mx["name"],
             "program": mx["program"], "mode": mx["mode"], "expected": mx["expect"]["outcome"],
             "ops": mx["ops"], "args": ["--op", ",".join(mx["ops"]), "--mode", mx["mode"]],
             "exit_codes": EXIT_CODES[mx["expect"]["outcome"]], "completed": mx["expect"].get("completed", []),
             "not_run": mx["expect"].get("not_run", []), "quick": bool(mx.get("quick")), "because": mx["because"]}
        if mx["expect"].get("faults"):
            m["faults"] = mx["expect"]["faults"]
            m["recognise"] = recognise("fault", {})
        if mx["expect"].get("refused"):
            op = mx["expect"]["refused"]
            e = resolve(table, cpp[op], mx["program"], mx["mode"])
            m["refused"] = op
            m["where"], m["why"] = e["where"], e["why"]
            m["recognise"] = recognise("refused", e)
        mixed.append(m)
    return {"about": "Generated from patterns.json by generate_expected.py: do not edit. Every pattern x mode x "
                     "language of examples/user_patterns with the outcome crossbench must give; "
                     "tests/gpu/test_user_patterns.py runs them and compares.",
            "size_meaning": table["size_meaning"], "sizes": table["sizes"], "quick_sizes": table["quick_sizes"],
            "outcomes": table["outcomes"], "programs": table["programs"],
            "modes": table["modes"], "cases": cases, "mixed": mixed}


def _cell(e):
    if e["outcome"] == "refused":
        return f"refused: {e['where']}, {e['why']}"
    if e["outcome"] == "pass" and e.get("sync"):
        return f"pass (sync {e['sync']})"
    return e["outcome"].replace("_", " ")


def _merge(cells, i):
    """One table cell from the programs' cells: the one value, or each program's."""
    values = [c[i] for c in cells]
    return values[0] if len(set(values)) == 1 else "; ".join(f"{c[0]}: {c[i]}" for c in cells)


def readme_table(table):
    lines = [BEGIN, "",
             "| pattern | language (program) | what one call does | hot, cold | graph | why |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in table["patterns"]:
        lang = row["language"]
        programs = row["programs"] if lang == "cpp" else [None]
        cells = []
        for p in programs:
            eager = _cell(resolve(table, row, p, "hot"))
            graph = _cell(resolve(table, row, p, "graph")) if lang == "cpp" else "n/a (no graph mode)"
            cells.append((p, eager, graph))
        where = ", ".join(p for p, _, _ in cells) if lang == "cpp" else "python"
        eager, graph = _merge(cells, 1), _merge(cells, 2)
        does = row["does"].replace("|", "\\|")
        lines.append(f"| `{row['name']}` | {where if lang == 'python' else 'cpp (' + where + ')'} | {does} | {eager} | {graph} | "
                     f"{row['because'].replace('|', chr(92) + '|')} |")
    lines += ["", "Mixed runs (one process, hot mode):", ""]
    for mx in table.get("mixed", []):
        lines.append(f"- `{mx['name']}` (`--op {','.join(mx['ops'])}`): {mx['because']}.")
    lines += ["", END]
    return "\n".join(lines)


def dump_expected(doc):
    """expected.json's text: the header keys indented, one case per line (diffs stay readable)."""
    head = {k: v for k, v in doc.items() if k not in ("cases", "mixed")}
    text = json.dumps(head, indent=1)[:-2]
    for key in ("cases", "mixed"):
        rows = ",\n".join("  " + json.dumps(c) for c in doc[key])
        text += f',\n "{key}": [\n{rows}\n ]'
    return text + "\n}\n"


def render(table):
    expected = dump_expected(expand(table))
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    a, b = readme.find(BEGIN), readme.find(END)
    if a < 0 or b < a:
        raise TableError(f"{README}: the markers of the generated table are missing")
    readme = readme[:a] + readme_table(table) + readme[b + len(END):]
    return expected, readme


def main(argv):
    check = "--check" in argv[1:]
    try:
        expected, readme = render(load_table())
    except (TableError, KeyError, json.JSONDecodeError) as err:
        print(f"generate_expected: patterns.json: {err}", file=sys.stderr)
        return 2
    stale = []
    for path, text in ((EXPECTED, expected), (README, readme)):
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text:
            stale.append(os.path.relpath(path, HERE))
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if check:
        if stale:
            print(f"generate_expected: stale: {', '.join(stale)} (run examples/user_patterns/generate_expected.py)")
            return 1
        print("generate_expected: expected.json and README.md's table are current")
        return 0
    print(f"generate_expected: {'wrote ' + ', '.join(stale) if stale else 'nothing to change'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
