#!/usr/bin/env python3
"""The Python patterns of examples/user_patterns (issue 36 item 6): callables a user hands to
crossbench.bench, keyed by the names of patterns.json (whose rows say what each does and the
outcome crossbench must give). Each computes y = 2 x on n x n fp32 elements, or reads a value back.

As a library: PATTERNS[name](n, torch) -> Pattern (the callable, bench's extra arguments, a check
that one call computed what it says). As a program (tests/gpu/test_user_patterns.py runs it, with
crossbench and torch importable):

    python3 patterns.py --cases CASES.json --results RESULTS.json --out DIR [--sizes 64,4096]
                        [--min-time 0.1] [--max-time 0.5]

CASES.json: a list of expected.json's Python cases; each runs once per size through
crossbench.bench (hot or cold), its run folder under DIR. RESULTS.json gets one record per case
and size, written after each: {"id", "size", "fixture", "kind": "result" | "raised" | "skipped",
"passed", "verdict", "sync", "agree", "run_dir" | "type", "text", "out" (the run folder asked
for) | "reason"}. What it means is
the test's to judge. Exit 0 when every case ran (whatever its outcome), 2 on bad usage or when
torch or crossbench cannot be imported.
"""
import argparse
import ctypes
import dataclasses
import json
import os
import sys
import traceback


@dataclasses.dataclass
class Pattern:
    fn: object                 # the callable crossbench.bench times
    kwargs: dict               # more arguments of crossbench.bench (e.g. stream)
    check: object = None       # after one call and a device synchronization: True when it computed y = 2 x
    cleanup: object = None     # called after the run


class Skip(Exception):
    """The pattern cannot run here (triton missing, ...): its reason."""


def _buffers(n, torch):
    x = torch.rand(n, n, device="cuda", dtype=torch.float32) * 2 - 1
    return x, torch.empty_like(x)


def _twice_check(x, y, torch):
    return lambda: bool(torch.equal(y, x * 2))


def on_stream(n, torch):
    x, y = _buffers(n, torch)
    return Pattern(lambda: torch.mul(x, 2, out=y), {}, _twice_check(x, y, torch))


def side_unjoined(n, torch):
    x, y = _buffers(n, torch)
    side = torch.cuda.Stream()

    def fn():
        with torch.cuda.stream(side):
            torch.mul(x, 2, out=y)
    return Pattern(fn, {}, _twice_check(x, y, torch))


def side_forked_unjoined(n, torch):
    x, y = _buffers(n, torch)
    side = torch.cuda.Stream()

    def fn():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.mul(x, 2, out=y)
    return Pattern(fn, {}, _twice_check(x, y, torch))


def side_joined(n, torch):
    x, y = _buffers(n, torch)
    side = torch.cuda.Stream()

    def fn():
        cur = torch.cuda.current_stream()
        side.wait_stream(cur)
        with torch.cuda.stream(side):
            torch.mul(x, 2, out=y)
        cur.wait_stream(side)
    return Pattern(fn, {}, _twice_check(x, y, torch))


def item_readback(n, torch):
    x, _ = _buffers(n, torch)
    return Pattern(lambda: torch.sum(x).item(), {})


def cpu_readback(n, torch):
    x, y = _buffers(n, torch)

    def fn():
        torch.mul(x, 2, out=y)
        return y.cpu()
    return Pattern(fn, {}, _twice_check(x, y, torch))


def _triton():
    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        raise Skip(f"triton does not import ({e})")

    @triton.jit
    def twice_kernel(X, Y, n, bad, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(Y + offs, 2.0 * tl.load(X + offs, mask=mask), mask=mask)
        if bad != 0:
            if pid == 0:
                tl.store(Y + bad, 1.0)  # an index bug: far outside Y

    return triton, twice_kernel


def triton_twice(n, torch):
    triton, kernel = _triton()
    x, y = _buffers(n, torch)
    count = x.numel()
    grid = (triton.cdiv(count, 1024),)
    return Pattern(lambda: kernel[grid](x, y, count, 0, BLOCK=1024), {}, _twice_check(x, y, torch))


def _libcuda():
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise Skip(f"libcuda.so.1 does not load ({e})")


def blocking_side_stream(n, torch):
    cuda = _libcuda()
    x, y = _buffers(n, torch)
    torch.cuda.synchronize()  # the primary context is current on this thread
    handle = ctypes.c_void_p()
    rc = cuda.cuStreamCreate(ctypes.byref(handle), 0)  # CU_STREAM_DEFAULT: a blocking stream
    if rc != 0:
        raise RuntimeError(f"cuStreamCreate: CUresult {rc}")
    ext = torch.cuda.ExternalStream(handle.value)

    def fn():
        with torch.cuda.stream(ext):
            torch.mul(x, 2, out=y)

    def cleanup():
        torch.cuda.synchronize()
        cuda.cuStreamDestroy_v2(handle)
    return Pattern(fn, {}, _twice_check(x, y, torch), cleanup)


def legacy_when_handed_side(n, torch):
    x, y = _buffers(n, torch)
    handed = torch.cuda.Stream()
    legacy = torch.cuda.default_stream()

    def fn():
        with torch.cuda.stream(legacy):
            torch.mul(x, 2, out=y)
    return Pattern(fn, {"stream": handed}, _twice_check(x, y, torch))


def triton_fault(n, torch):
    triton, kernel = _triton()
    x, y = _buffers(n, torch)
    count = x.numel()
    grid = (triton.cdiv(count, 1024),)
    bad = -(y.data_ptr() // 4) + 16  # y[bad] is address 64: below every mapping
    return Pattern(lambda: kernel[grid](x, y, count, bad, BLOCK=1024), {})


def sleep_hang(n, torch):
    # torch.cuda._sleep spins for a number of SM cycles: 4e10 is about 20 s at the H200's 1.98 GHz,
    # far past the test's wait deadline (5 s), short enough that the process's exit need not wait long.
    return Pattern(lambda: torch.cuda._sleep(40_000_000_000), {})


PATTERNS = {
    "py_on_stream": on_stream,
    "py_side_unjoined": side_unjoined,
    "py_side_forked_unjoined": side_forked_unjoined,
    "py_side_joined": side_joined,
    "py_item_readback": item_readback,
    "py_cpu_readback": cpu_readback,
    "py_triton": triton_twice,
    "py_blocking_side_stream": blocking_side_stream,
    "py_legacy_when_handed_side": legacy_when_handed_side,
    "py_fault": triton_fault,
    "py_hang": sleep_hang,
}


def run_case(case, n, out, timing, crossbench, torch):
    """One case at size n: its record for RESULTS.json."""
    fixture = f"{case['pattern']}/fp32/{n}"
    rec = {"id": case["id"], "size": n, "fixture": fixture}
    try:
        p = PATTERNS[case["pattern"]](n, torch)
    except Skip as e:
        return dict(rec, kind="skipped", reason=str(e))
    except Exception as e:  # noqa: BLE001 - the corpus could not set the pattern up
        return dict(rec, kind="raised", type="PatternError", text=f"{fixture}: setting up the pattern: {e!r}")
    run_dir = os.path.join(out, case["id"].replace("/", "_") + f"_{n}")
    try:
        if p.check is not None and not case.get("isolated"):
            p.fn()
            torch.cuda.synchronize()
            if not p.check():
                return dict(rec, kind="raised", type="PatternError",
                            text=f"{fixture}: the pattern did not compute y = 2 x (a corpus bug, not crossbench's)")
        # No flops or bytes: rates are not what the corpus checks (and a readback's bytes are not 2 x's).
        r = crossbench.bench(p.fn, mode=case["mode"], name=case["pattern"], dtype="fp32", size=n, out=run_dir,
                             warmup=False, **timing, **p.kwargs)
        return dict(rec, kind="result", passed=bool(r.passed), verdict=r.verdict, sync=r.sync, agree=r.agree,
                    run_dir=r.run_dir, event_ns=r.event_ns, cupti_ns=r.cupti_ns)
    except Exception as e:  # noqa: BLE001 - what crossbench raised is the outcome under test
        return dict(rec, kind="raised", type=type(e).__name__, text=str(e), out=run_dir,
                    traceback=traceback.format_exc(limit=4))
    finally:
        if p.cleanup is not None:
            try:
                p.cleanup()
            except Exception:  # noqa: BLE001 - a lost context after a fault
                pass


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="64,4096")
    ap.add_argument("--min-time", type=float, default=0.1)
    ap.add_argument("--max-time", type=float, default=0.5)
    a = ap.parse_args(argv[1:])
    try:
        import torch
        import crossbench
    except ImportError as e:
        print(f"patterns.py: {e}", file=sys.stderr)
        return 2
    with open(a.cases) as f:
        cases = json.load(f)
    unknown = [c["pattern"] for c in cases if c["pattern"] not in PATTERNS]
    if unknown:
        print(f"patterns.py: no callable for {', '.join(unknown)}", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    timing = {"min_time_s": a.min_time, "max_time_s": a.max_time}
    records = []
    for case in cases:
        for n in (int(s) for s in a.sizes.split(",")):
            rec = run_case(case, n, a.out, timing, crossbench, torch)
            records.append(rec)
            print(f"patterns.py: {rec['fixture']} ({case['mode']}): {rec['kind']} "
                  f"{rec.get('verdict') or rec.get('text') or rec.get('reason') or ''}"[:300], flush=True)
            with open(a.results, "w") as f:
                json.dump(records, f, indent=1)
            if rec["kind"] == "raised" and case.get("isolated"):
                return 0  # the context may be lost: nothing more in this process
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
