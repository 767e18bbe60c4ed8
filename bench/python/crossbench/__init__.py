"""crossbench from Python (docs/python.md).

Check a PyTorch profile (no GPU, no CUDA toolkit, no torch import needed):

    from crossbench import check_profile, check_files
    v = check_profile(prof, "prof_check")          # a finished torch.profiler.profile
    v = check_files("trace.json", "table.txt")     # files already exported
    print(v.verdict, v.exit_code)                  # as `validate --trace trace.json --table table.txt`

Time a PyTorch, Triton or any other callable that enqueues GPU work with crossbench's method,
cross-checked by its CUPTI profiler (needs a GPU, and the CUDA toolkit when the package was built):

    import torch, crossbench
    a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    r = crossbench.bench(lambda: torch.add(a, b), name="add", dtype="bf16", size=4096, bytes=3 * a.nbytes)
    print(r)                      # add/bf16/4096: event 24.3 us, CUPTI 24.3 us, agree ...

The command line: crossbench-validate (or python -m crossbench validate) takes validate's arguments.
Importing crossbench never imports torch.
"""
from . import _core
from ._bench import Result, bench, device_error
from ._check import ValidateError, Verdict, check_files, check_profile, export_profile, handler

# The public names: the submodules (_bench, _check, _core) and what they import stay private.
__all__ = ["bench", "Result", "device_error", "check_files", "check_profile", "export_profile", "handler", "Verdict",
           "ValidateError"]

#: crossbench's version: the CMake project's VERSION, compiled into _core (bench/python/CMakeLists.txt),
#: the same string `bench --version` and `validate --version` print.
__version__ = _core.__version__
