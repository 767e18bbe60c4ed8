"""crossbench.bench: time a PyTorch, Triton or any other callable that enqueues GPU work with
crossbench's method, cross-checked by its CUPTI profiler (docs/python.md).

`bench` runs the same code as the `bench` command (bench/run/bench_run_gpu.cpp, through the module
crossbench._core): the blocking kernel holds the stream while the start event, the calls and the
stop event are queued, so the Python launch overhead stays outside the timed interval; hot mode
batches calls per sample, cold mode flushes the L2 before each one-call sample; the noise-based
stopping rule; the CUPTI profiler records the same samples and the validator checks the run
folder. Times are per call, in ns (``*_ns``) with microsecond conveniences (``*_us``).

This file never imports torch: it uses torch only when the caller already imported it (for the
current stream and to see whether torch.profiler is recording). Where crossbench was built without
the CUDA toolkit (its check functions only), bench and device_error say so in one line.
"""
from __future__ import annotations

import dataclasses as _dataclasses
import json as _json
import os as _os
import re as _re
import sys as _sys
import tempfile as _tempfile

from . import _core

_DTYPES = ("bf16", "fp16", "fp32")


def device_error():
    """The one-line reason no CUDA device is usable ("no CUDA device found (...)", or that this
    crossbench was built without the CUDA toolkit), or "" when one is."""
    return _core.bench_unavailable or _core.device_error()


@_dataclasses.dataclass
class Result:
    """What one crossbench.bench call measured. Times are per call: ns, and the same in us."""
    name: str                 # the fixture, "<name>/<dtype>/<size>"
    mode: str                 # "hot" or "cold"
    event_ns: float           # median cudaEvent time per call over every sample (bench's figure)
    cupti_ns: float | None    # median CUPTI span per call (first kernel start to last end of a sample)
    cupti_kernel_ns: float | None  # CUPTI kernel time per call (the table's CUDA time avg of the op)
    diff_ns: float | None     # median over the recorded samples of |event - CUPTI| per call
    tolerance_ns: float | None  # the validator's bound on diff_ns: max(500 ns, 1% of event) (cold: + 3 us / calls per sample)
    agree: bool | None        # diff_ns <= tolerance_ns; None when CUPTI did not run
    noise: float              # relative standard deviation of the samples (0.005 = 0.5%)
    noisy: bool               # the median missed its precision target (bench's `noisy`: less precise than asked, not wrong)
    samples: int              # samples taken (each `calls_per_sample` calls in hot mode)
    calls_per_sample: int
    rotation: int             # cold mode: callables used in turn (1: inputs not rotated)
    flops: float              # per call, as given
    bytes: float              # per call, as given
    passed: bool              # the run folder's validation passed
    verdict: str              # the validator's one-line verdict
    run_dir: str              # the run folder: the same files as `bench`, validated
    cupti: bool               # CUPTI recorded (False: events only, see `note`)
    note: str                 # why CUPTI did not run, or why inputs were not rotated; "" otherwise
    log: str = ""             # what bench printed (Google Benchmark's table, the validation summary)
    sync: str = ""            # "declared" / "detected": fn synchronizes, timed without the blocking kernel

    @property
    def event_us(self):
        return self.event_ns / 1e3

    @property
    def cupti_us(self):
        return None if self.cupti_ns is None else self.cupti_ns / 1e3

    @property
    def cupti_kernel_us(self):
        return None if self.cupti_kernel_ns is None else self.cupti_kernel_ns / 1e3

    @property
    def tflops(self):
        """TFLOP/s from the event median and the given flops (0 without them)."""
        return self.flops / self.event_ns / 1e3 if self.event_ns > 0 else 0.0

    @property
    def gbps(self):
        """GB/s from the event median and the given bytes (0 without them)."""
        return self.bytes / self.event_ns if self.event_ns > 0 else 0.0

    def __str__(self):
        us = lambda ns: "-" if ns is None else f"{ns / 1e3:.3f} us"
        if self.agree is None:
            check = "CUPTI not run"
        else:
            check = (f"{'agree' if self.agree else 'DISAGREE'}: |event - CUPTI| {self.diff_ns:.0f} ns "
                     f"(bound {self.tolerance_ns:.0f} ns){', noisy' if self.noisy else ''}")
        return (f"{self.name} ({self.mode}): event {us(self.event_ns)}, CUPTI {us(self.cupti_ns)} "
                f"(kernels {us(self.cupti_kernel_ns)}), {check}, noise {self.noise * 100:.2f}%, "
                f"{self.samples} samples x {self.calls_per_sample} calls; {self.verdict}; {self.run_dir}")


def _torch():
    """torch when the caller imported it, else None (never imported here)."""
    return _sys.modules.get("torch")


def _torch_profiler_recording(torch):
    """True while torch.profiler / torch.autograd.profiler records in this process: the flag the
    profilers set on start, or the C++ state's own answer (private names: either may go)."""
    flag = getattr(getattr(getattr(torch, "autograd", None), "profiler", None), "_is_profiler_enabled", False)
    try:
        state = torch._C._autograd._profiler_enabled()
    except (AttributeError, RuntimeError):
        state = False
    return bool(flag) or bool(state)


def _stream_handle(stream, torch):
    """The cudaStream_t as an int: `stream` as int or an object with .cuda_stream (torch.cuda.Stream)
    or .ptr (CuPy); None: torch's current stream when torch is imported, else the legacy default stream (0)."""
    if stream is None:
        return int(torch.cuda.current_stream().cuda_stream) if torch is not None else 0
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return stream


def _check_stream(stream):
    """Raises TypeError for a stream argument _stream_handle cannot use."""
    if stream is None or hasattr(stream, "cuda_stream") or hasattr(stream, "ptr"):
        return
    if not isinstance(stream, int) or isinstance(stream, bool) or stream < 0:
        raise TypeError(f"stream must be an int (cudaStream_t), a torch.cuda.Stream or None, not {stream!r}")


def _fixture_label(fn, name):
    if name is None:
        name = getattr(fn, "__name__", type(fn).__name__)
    label = _re.sub(r"[^A-Za-z0-9_.:+-]+", "_", str(name)).strip("_") or "fn"
    return label


def bench(fn, *, warmup=True, mode="hot", flops=0.0, bytes=0.0, stream=None, out=None, name=None,
          dtype="fp32", size=1, cupti=True, verbose=False, batch=0, max_noise_pct=None, min_samples=None,
          min_time_s=None, max_time_s=None, wait_steps=1, warmup_steps=2, active_steps=20, sync=False):
    """Times `fn` with crossbench's method and returns a Result.

    fn: a callable that enqueues GPU work on the stream, or a list of them: cold mode uses them in
        turn (input rotation: give copies on separate inputs); hot mode uses the first. Called with
        no arguments on this thread with the GIL held; its inputs are yours (never copied). Each is
        called once (and the stream synchronized) before anything is timed. A callable that
        synchronizes with the device (e.g. .item(), .cpu(), an allocation that frees) is found on
        its first blocked call and timed without the blocking kernel (its times then hold the
        launch overhead; the run's events.json says timing.sync "detected").
    sync: declares that fn synchronizes (nvbench's exec_tag::sync): recorded and checked like any
        callable (events.json: timing.sync_declared; timing.sync "declared" where it did
        synchronize, timed without the blocking kernel; behind it where it did not).
    warmup: run until steady (bench --warmup) before recording. mode: "hot" or "cold".
    flops, bytes: per call, for TFLOP/s and GB/s (and cold mode's copy-bandwidth check).
    stream: the stream fn enqueues on; None: torch.cuda.current_stream() (legacy default stream 0
        without torch). A torch.cuda.Stream is also made torch's current stream during the run.
    out: the run folder (must not exist or be empty); None: a new folder under the system's temp dir.
    name, dtype, size: the fixture's name "<name>/<dtype>/<size>" in the files (dtype one of bf16,
        fp16, fp32; labels only). cupti: False times with cudaEvents alone.
    verbose: print what bench prints (Google Benchmark's table, the validation summary).
    The rest are bench's options of the same names (--batch, --max-noise, ...); the stopping rule's
        (max_noise_pct, min_samples, min_time_s, max_time_s) default to bench's own, read from
        crossbench._core.stopping_defaults() (0.5%, 10, 0.5 s, 3 s).
    Raises RuntimeError("no CUDA device found (...)") without a usable GPU (or, where crossbench was
    built without the CUDA toolkit, "crossbench.bench is not available: ..."), ValueError for bad
    arguments, RuntimeError when the fixture failed, fn's own exception when it raised,
    KeyboardInterrupt after Ctrl-C (the run folder is still written), RuntimeError naming the
    fixture after a device fault or a call that did not finish within XB_WAIT_DEADLINE_S (60 s):
    the process's CUDA context, torch's too, is unusable after it (docs/python.md).
    """
    callables = list(fn) if isinstance(fn, (list, tuple)) else [fn]
    if not callables or not all(callable(f) for f in callables):
        raise TypeError("fn must be a callable or a non-empty list of callables")
    if mode not in ("hot", "cold"):
        raise ValueError(f"mode must be 'hot' or 'cold', not {mode!r}")
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)} (a label of the fixture), not {dtype!r}")
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be an int >= 1 (a label of the fixture), not {size!r}")
    if flops < 0 or bytes < 0:
        raise ValueError("flops and bytes must be >= 0")
    _check_stream(stream)
    label = _fixture_label(callables[0], name)
    err = device_error()
    if err:
        raise RuntimeError(err)
    given = dict(max_noise_pct=max_noise_pct, min_samples=min_samples, min_time_s=min_time_s,
                 max_time_s=max_time_s)
    defaults = _core.stopping_defaults()
    stopping = {k: (defaults[k] if v is None else v) for k, v in given.items()}
    torch = _torch()
    handle = _stream_handle(stream, torch)
    note = ""
    if cupti and torch is not None and _torch_profiler_recording(torch):
        # CUPTI has one set of buffers per process: recording now would take torch.profiler's.
        note = "torch.profiler is recording, and CUPTI serves one profiler per process: timed with cudaEvents alone, the CUPTI checks not run"
        print(f"crossbench: {note}", file=_sys.stderr)
        cupti = False
    if mode == "cold" and len(callables) == 1:
        note = note or "cold mode with one callable: inputs not rotated (the L2 is still flushed before every sample)"
    out = out if out is not None else _tempfile.mkdtemp(prefix="crossbench-")
    args = dict(callables=callables, name=label, dtype=dtype, size=size, stream=handle, mode=mode,
                warmup=bool(warmup), flops=float(flops), bytes=float(bytes), out=_os.fspath(out), cupti=bool(cupti),
                batch=int(batch), max_noise_pct=float(stopping["max_noise_pct"]),
                min_samples=int(stopping["min_samples"]), min_time_s=float(stopping["min_time_s"]),
                max_time_s=float(stopping["max_time_s"]), wait_steps=int(wait_steps),
                warmup_steps=int(warmup_steps), active_steps=int(active_steps), sync=bool(sync))
    if torch is not None and hasattr(stream, "cuda_stream"):
        with torch.cuda.stream(stream):
            ran = _core.run(**args)
    else:
        ran = _core.run(**args)
    if verbose:
        print(ran["log"], end="")
    if ran["note"]:
        note = ran["note"]
        print(f"crossbench: {note}", file=_sys.stderr)
    return _read_result(ran["run_dir"], f"{label}/{dtype}/{size}", mode, ran["cupti"], note, ran["log"],
                        float(flops), float(bytes))


def _load(run_dir, file):
    with open(_os.path.join(run_dir, file)) as f:
        return _json.load(f)


def _read_result(run_dir, fixture, mode, cupti, note, log, flops, bytes_):
    """The Result of `fixture` from its run folder's events.json, validation.json and table.json."""
    events = _load(run_dir, "events.json")
    fx = next((f for f in events["fixtures"] if f["name"] == fixture), None)
    if fx is None:
        raise RuntimeError(f"{fixture}: not in {run_dir}/events.json")
    if fx.get("error"):
        raise RuntimeError(f"{fixture} failed: {fx['error']} (run folder {run_dir})")
    validation = _load(run_dir, "validation.json")
    fig = next((g for g in validation.get("figures", {}).get("event_vs_cupti", []) or []
                if isinstance(g, dict) and g.get("fixture") == fixture), None)
    kernel_ns = None
    if cupti:
        op = fixture.split("/")[0]
        row = next((r for r in _load(run_dir, "table.json")["rows"] if r["name"] == f"xb::{op}"), None)
        kernel_ns = row["cuda_time_avg_ns"] if row else None
    stats, timing = fx["stats"], fx["timing"]
    diff = fig["abs_diff_median_ns"] if fig else None
    tol = fig["tolerance_ns"] if fig else None
    return Result(name=fixture, mode=mode, event_ns=stats["median_ns"], cupti_ns=fig["cupti_median_ns"] if fig else None,
                  cupti_kernel_ns=kernel_ns, diff_ns=diff, tolerance_ns=tol,
                  agree=None if fig is None else bool(diff <= tol), noise=stats["rsd"], noisy=bool(fx.get("noisy")),
                  samples=int(stats["count"]), calls_per_sample=int(timing["launches_per_sample"]),
                  rotation=int(timing.get("rotation", 1)), flops=flops, bytes=bytes_,
                  passed=bool(validation["passed"]), verdict=validation.get("verdict", ""), run_dir=run_dir,
                  cupti=cupti, note=note, log=log, sync=timing.get("sync", ""))
