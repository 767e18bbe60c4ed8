#!/usr/bin/env python3
"""scripts/counters_vs_ncu.py (issue 18's Nsight Compute comparison) on the CPU, on the committed
H200 evidence results/h200/counters-2026-12-01 (crossbench's sweep/counters.json against ncu's
kernel-replay CSVs): per call, the last K of 2K kernels; DRAM bytes compared only over the L2
(matmul 2048's 25 MB fit in the 60 MB L2: "not compared", the validator's rule); the two kernel-
replay disagreements of that run (add 4096 +18.89%, add 8192 +4.84%); tensor FLOPs equal at every
size, 8192's +1.5625% over 2 n^3 in both; SASS FLOPs "not counted by CUPTI on this GPU"; a missing
counters.json is exit 2; an ncu folder without CSVs for the fixtures is a disagreement.

Usage: test_counters_vs_ncu.py ROOT
"""
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "counters_vs_ncu.py")
EVIDENCE = os.path.join(ROOT, "results", "h200", "counters-2026-12-01")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


r = run(os.path.join(EVIDENCE, "sweep"), os.path.join(EVIDENCE, "ncu"), "kernel replay")
out = r.stdout
lines = out.splitlines()
check(r.returncode == 0, f"exit 0 whatever the verdict (got {r.returncode}: {r.stderr})")
check(lines and lines[-1] == "2 DISAGREEMENTS", f"last line '2 DISAGREEMENTS' (got {lines[-1:]!r})")
check(lines and lines[0].startswith("# kernel replay:"), "the label heads the output")


def row(fixture, quantity):
    """The line of `quantity` under `fixture`'s header line."""
    at = next((i for i, l in enumerate(lines) if l.startswith(fixture + " ")), None)
    if at is None:
        return ""
    for l in lines[at + 1:]:
        if l and not l.startswith(" "):
            return ""
        if l.split()[0] == quantity:
            return l
    return ""


check("+18.89%  OFF" in row("add/bf16/4096", "dram_bytes"), "add 4096 DRAM bytes +18.89% OFF: " + row("add/bf16/4096", "dram_bytes"))
check("+4.84%  OFF" in row("add/bf16/8192", "dram_bytes"), "add 8192 DRAM bytes +4.84% OFF")
check("+1.06%  ok" in row("add/bf16/16384", "dram_bytes"), "add 16384 DRAM bytes +1.06% ok")
check("not compared: the model's 25165824 B fit in the 62914560 B L2" in row("matmul/bf16/2048", "dram_bytes"),
      "matmul 2048 DRAM bytes not compared (in the L2): " + row("matmul/bf16/2048", "dram_bytes"))
for n in (2048, 4096, 8192):
    check("+0.00%  ok" in row(f"matmul/bf16/{n}", "tensor_flops"), f"matmul {n} tensor FLOPs equal")
check("1116691496960    1116691496960" in row("matmul/bf16/8192", "tensor_flops"), "8192's counted tensor FLOPs")
check("crossbench +1.5625%, ncu +1.5625% of the useful 1099511627776" in row("matmul/bf16/8192", "vs"),
      "8192: +1/64 over 2 n^3 in both: " + row("matmul/bf16/8192", "vs"))
check("not counted by CUPTI on this GPU" in row("add/bf16/4096", "sass_flops"), "SASS FLOPs not counted, not a disagreement")
check("(reported only)" in row("matmul/bf16/8192", "duration_ns"), "duration reported only")
check("ncu 32 kernels of 2K calls (ok), last 16 compared" in out, "K = 16: the last 16 of 32 kernels")

with tempfile.TemporaryDirectory() as tmp:
    r = run(tmp, os.path.join(EVIDENCE, "ncu"), "x")
    check(r.returncode == 2 and "counters.json" in r.stderr, f"no counters.json: exit 2 naming it (got {r.returncode})")
    r = run(os.path.join(EVIDENCE, "sweep"), tmp, "x")
    check(r.returncode == 0 and r.stdout.splitlines()[-1] == "1 DISAGREEMENTS", "no ncu CSV: one disagreement")

print("counters_vs_ncu.py: " + ("all checks passed" if not failures else f"{len(failures)} FAILED"))
sys.exit(1 if failures else 0)
