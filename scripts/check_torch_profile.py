#!/usr/bin/env python3
"""crossbench_check with a real torch.profiler run (issue 16 item 5, the GPU side of its test): it
profiles a workload of its own on the GPU; a profile you already have is checked with
`build/validate --trace TRACE.json --table TABLE.txt` or crossbench_check.check_files.

Profiles a bf16 matmul + add on the GPU twice: once with a plain `with profile(...)` block checked by
check_profile(prof, OUT/one_call), once under a wait/warmup/active schedule whose on_trace_ready is
crossbench_check.handler(OUT/handler). Prints each verdict and validate's summary. Exit 0 when the
checks ran (whatever their verdicts: PyTorch's own defects, such as the overhead double count,
are findings, not errors), 2 when they could not run (no CUDA, no validate binary, unusable export).

    XB_VALIDATE=build-h200/validate python3 scripts/check_torch_profile.py OUT_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validate", "python"))
import crossbench_check  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "torch-profile-check"
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule
    except ImportError as e:
        print(f"check_torch_profile: PyTorch is not installed ({e}); to check a profile you already have, "
              "run `build/validate --trace TRACE.json --table TABLE.txt` (README, \"Check your PyTorch profile\")",
              file=sys.stderr)
        return 2

    if not torch.cuda.is_available():
        print("check_torch_profile: no CUDA device", file=sys.stderr)
        return 2
    print("torch %s, %s" % (torch.__version__, torch.cuda.get_device_name(0)))
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):  # warm-up: cuBLAS handles and kernels loaded before profiling
        (a @ b + a).sum()
    torch.cuda.synchronize()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    try:
        with profile(activities=acts) as prof:
            for _ in range(5):
                c = a @ b
                d = c + a
            torch.cuda.synchronize()
        r = crossbench_check.check_profile(prof, os.path.join(out, "one_call"))
        print("check_profile: " + r.verdict)
        sys.stdout.write(r.summary)

        h = crossbench_check.handler(os.path.join(out, "handler"))
        with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=h) as p:
            for _ in range(4):
                c = a @ b
                d = c + a
                torch.cuda.synchronize()
                p.step()
        for res in h.results:
            print("handler: %s (report: %s)" % (res.verdict, res.report_path))
        del d
    except (crossbench_check.ValidateError, FileNotFoundError) as e:
        print("check_torch_profile: error: %s" % e, file=sys.stderr)
        return 2
    return 0 if h.results else 2


if __name__ == "__main__":
    sys.exit(main())
