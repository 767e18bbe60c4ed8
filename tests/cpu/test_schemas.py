#!/usr/bin/env python3
"""ctest `json_schemas` (label cpu): the run folder's JSON files validate against the JSON Schemas
of docs/schemas/ (draft 2020-12), with the Python package jsonschema.

usage: test_schemas.py REPO_ROOT BENCH_EXE

Validated: every *.json of the committed H200 run folder (benchmark.json included) and of a run
folder replayed from the recorded H200 session, the recorded session itself, and the validator's
reports on PyTorch's traces (results/torch-h200-validation). Every *.json of a run folder must have
a schema, so a new file cannot go undocumented. Each schema is checked against the meta-schema, and
a copy of each file with one required field removed must be rejected (so no schema accepts
everything, e.g. through a $ref that resolves to nothing).

Skipped (exit 77, "SKIPPED: ...") when jsonschema (4.0 or later, for draft 2020-12) cannot be
imported; scripts/test.sh installs it with pip when it can.
"""
import copy
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xb_pytest_common as common  # noqa: E402

# Run-folder file -> schema file (docs/schemas/), and one required path to remove for the
# negative check.
SCHEMA_OF = {
    "raw_session.json": ("raw_session.schema.json", ("records", 0, "correlation_id")),
    "events.json": ("events.schema.json", ("fixtures", 0, "steps")),
    "table.json": ("table.schema.json", ("rows", 0, "self_cuda_ns")),
    "trace_only.json": ("trace_only.schema.json", ("traceEvents", 0, "dur")),
    "full.json": ("full.schema.json", ("distributedInfo", "rank")),
    "validation.json": ("validation.schema.json", ("checks", 0, "status")),
    "benchmark.json": ("benchmark.schema.json", ("benchmarks", 0, "run_type")),
}


def load_schemas(schema_dir):
    import jsonschema
    schemas = {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json"))):
        with open(path) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        schemas[os.path.basename(path)] = schema
    return schemas


def make_validator(schemas, name):
    """A draft 2020-12 validator whose relative $refs ("common.schema.json#/$defs/...") resolve
    to the other schema files, with jsonschema's `referencing` registry (4.18+) or RefResolver."""
    import jsonschema
    cls = jsonschema.Draft202012Validator
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
    except ImportError:
        resolver = jsonschema.RefResolver(base_uri=name, referrer=schemas[name], store=dict(schemas))
        return cls(schemas[name], resolver=resolver)
    registry = Registry().with_resources(
        (n, Resource(contents=s, specification=DRAFT202012)) for n, s in schemas.items())
    return cls(schemas[name], registry=registry)


def errors_of(validator, doc, limit=3):
    found = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}" for e in found[:limit]]


def check_file(validators, schema_name, path, removed=None):
    with open(path) as f:
        doc = json.load(f)
    errors = errors_of(validators[schema_name], doc)
    assert not errors, f"{path} does not match docs/schemas/{schema_name}:\n  " + "\n  ".join(errors)
    if removed is not None:
        broken = copy.deepcopy(doc)
        node = broken
        for key in removed[:-1]:
            node = node[key]
        del node[removed[-1]]
        assert next(validators[schema_name].iter_errors(broken), None) is not None, (
            f"docs/schemas/{schema_name} accepts {os.path.basename(path)} without "
            f"{'/'.join(str(k) for k in removed)}")


def check_sample_clocks(validators, events_path):
    """A run folder's events.json with per-sample SM clocks (as a blocking-mode run writes them:
    some null, their reasons counted, the range in stats.sm_clock) matches; a clock that is not a
    number, or the clocks without their reasons, does not."""
    with open(events_path) as f:
        doc = json.load(f)
    fixture = next(f for f in doc["fixtures"] if f.get("timing", {}).get("samples_ns"))
    n = len(fixture["timing"]["samples_ns"])
    fixture["timing"]["sample_sm_clock_mhz"] = [1980.0] * (n - 1) + [None]
    fixture["timing"]["sm_clock_absent"] = {"other_sm": 0, "host_gap": 0, "short_window": 0, "unreadable": 0,
                                            "last": 1}
    fixture["stats"]["sm_clock"] = {"samples": n - 1, "min_mhz": 1980.0, "median_mhz": 1980.0, "max_mhz": 1980.0}
    v = validators["events.schema.json"]
    errors = errors_of(v, doc)
    assert not errors, "events.json with per-sample clocks:\n  " + "\n  ".join(errors)
    for edit in (lambda t: t["sample_sm_clock_mhz"].__setitem__(0, "1980"), lambda t: t.pop("sm_clock_absent")):
        broken = copy.deepcopy(doc)
        edit(next(f for f in broken["fixtures"] if "sample_sm_clock_mhz" in f.get("timing", {}))["timing"])
        assert next(v.iter_errors(broken), None) is not None, "events.schema.json accepts broken SM clocks"


def body(tmp):
    repo, bench = common.parse_args("REPO_ROOT BENCH_EXE")
    common.require_module("jsonschema", "jsonschema", "the JSON Schema test")
    import jsonschema
    if not hasattr(jsonschema, "Draft202012Validator"):
        common.skip(f"jsonschema {getattr(jsonschema, '__version__', '?')} has no draft 2020-12 support "
                    "(4.0 or later needed): python3 -m pip install -U jsonschema")
    schemas = load_schemas(os.path.join(repo, "docs", "schemas"))
    validators = {name: make_validator(schemas, name) for name in schemas}
    for schema_name, _ in SCHEMA_OF.values():
        assert schema_name in schemas, f"docs/schemas/{schema_name} is missing"

    checked = 0
    for label, folder in common.run_folders(repo, bench, tmp):
        names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "*.json")))
        unknown = [n for n in names if n not in SCHEMA_OF]
        assert not unknown, f"{label}: {unknown} have no schema in docs/schemas/ (add one and to SCHEMA_OF)"
        for name in names:
            schema_name, removed = SCHEMA_OF[name]
            check_file(validators, schema_name, os.path.join(folder, name), removed)
            checked += 1
        print(f"ok: {label}: {', '.join(names)}")
    check_sample_clocks(validators, os.path.join(folder, "events.json"))
    print(f"ok: {label}: events.json with per-sample SM clocks")
    # bench compare's report, of the last run folder against itself.
    compare_out = os.path.join(tmp, "compare")
    r = subprocess.run([bench, "compare", folder, folder, "--out", compare_out], capture_output=True, text=True)
    assert r.returncode in (0, 1, 3), f"bench compare: exit {r.returncode}: {r.stderr}"
    check_file(validators, "compare.schema.json", os.path.join(compare_out, "compare.json"), ("fixtures", 0, "verdict"))
    print(f"ok: {label}: compare.json of bench compare")
    check_file(validators, "raw_session.schema.json", os.path.join(repo, common.SESSION))
    torch_reports = sorted(glob.glob(os.path.join(repo, "results", "torch-h200-validation", "*.json")))
    for path in torch_reports:
        check_file(validators, "validation.schema.json", path)
    print(f"ok: {common.SESSION} and {len(torch_reports)} validation reports on PyTorch's traces")
    print(f"ok: {checked + 1 + len(torch_reports)} files match docs/schemas/ ({len(schemas)} schemas)")


if __name__ == "__main__":
    common.main(body)
