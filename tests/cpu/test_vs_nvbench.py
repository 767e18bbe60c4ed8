#!/usr/bin/env python3
"""tools/lab/nvbench/side_by_side.py on the CPU (issue 40): nvbench's JSON beside crossbench's run
folders, from committed inputs.

Inputs: tests/data/vs-nvbench/nvbench_sample.json (a synthetic nvbench JSON written from
nvbench/json_printer.cu's format: add and matmul at 64 and 4096, matmul 64 skipped),
tests/data/vs-nvbench/smi_sample.csv (four nvidia-smi readings, two power-capped), the H200 run
folders results/h200/trust-2026-12-04/main (hot, all eight fixtures, events.json.gz with the
median's interval) and results/h200/core-2026-12-01/cmds/cold (cold, add and matmul at 4096 and
8192, recorded before the interval existed), and for the Python part a folder of run folders
(links to results/h200/core-2026-12-01/saxpy-hot and the hot one) with its cold step failed.
Checked: the rows (fixtures x rounds per part), every figure of add/bf16/4096 in the JSON and
its markdown line cell by cell, the skipped state, a fixture crossbench has and nvbench not, the
headers of every table, the steps' clock and power from the CSV, the wall time in all; bad input
(a steps file without its header, a path that is no run folder) exits 2 and writes nothing.

Usage: test_vs_nvbench.py REPO_ROOT
"""
import io
import contextlib
import json
import os
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab", "nvbench"))
import side_by_side as sbs  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "vs-nvbench")
HOT = os.path.join(ROOT, "results", "h200", "trust-2026-12-04", "main")
COLD = os.path.join(ROOT, "results", "h200", "core-2026-12-01", "cmds", "cold")
SAXPY = os.path.join(ROOT, "results", "h200", "core-2026-12-01", "saxpy-hot")
HEADER = "round\tpart\tharness\tmode\tpath\twall_s\texit\tsmi\n"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def steps_file(tmp):
    """The steps of one round of both parts, as h200_vs_nvbench.sh writes them."""
    pyhot = os.path.join(tmp, "pyhot")
    os.makedirs(pyhot)
    os.symlink(SAXPY, os.path.join(pyhot, "saxpy-hot"))
    os.symlink(HOT, os.path.join(pyhot, "torch-hot"))
    nv, smi = os.path.join(DATA, "nvbench_sample.json"), os.path.join(DATA, "smi_sample.csv")
    lines = [("1", "cpp", "nvbench", "cold+batch", nv, "12.5", "0", smi), ("1", "cpp", "crossbench", "hot", HOT, "7.7", "0", "-"),
             ("1", "cpp", "crossbench", "cold", COLD, "9.1", "0", "-"),
             ("1", "py", "nvbench", "cold+batch", nv, "29.4", "0", "-"), ("1", "py", "crossbench", "hot", "pyhot", "8.0", "0", "-"),
             ("1", "py", "crossbench", "cold", "runs/missing", "1.0", "1", "-")]
    path = os.path.join(tmp, "steps.tsv")
    with open(path, "w") as f:
        f.write(HEADER + "".join("\t".join(line) + "\n" for line in lines))
    return path


def test_rows(result):
    rows = {(r["part"], r["fixture"], r["round"]): r for r in result["rows"]}
    ops = ("matmul", "add", "addmm", "addmm_bias1d")
    cpp = {f"{op}/bf16/{n}" for op in ops for n in (64, 4096)} | {"add/bf16/8192", "matmul/bf16/8192"}
    py = {f"{op}/bf16/{n}" for op in ops for n in (64, 4096)} | {"saxpy/fp32/4096", "saxpy/fp32/16777216"}
    check({k[1] for k in rows if k[0] == "cpp"} == cpp, "cpp fixtures: %s" % sorted(k[1] for k in rows if k[0] == "cpp"))
    check({k[1] for k in rows if k[0] == "py"} == py, "py fixtures")
    check([r["fixture"] for r in result["rows"][:2]] == ["matmul/bf16/64", "add/bf16/64"], "row order (size, then bench's op order)")
    r = rows[("cpp", "add/bf16/4096", 1)]
    nv, cold, hot = r["nvbench"], r["crossbench_cold"], r["crossbench_hot"]
    check(abs(nv["cold_median_ns"] - 29000) < 1e-6 and abs(nv["cold_mean_ns"] - 29100) < 1e-6, "nvbench cold median, mean")
    check(abs(nv["batch_ns"] - 26000) < 1e-6 and nv["cold_noise"] == 0.004 and nv["cold_sm_mhz"] == 1980, "nvbench batch, noise, clock")
    check(nv["cold_wall_s"] == 0.6 and nv["batch_wall_s"] == 0.55, "nvbench walltimes")
    check(cold["median_ns"] == 29088.0 and cold["half_width"] is None, "crossbench cold median, no interval (2026-12-01 file)")
    check(abs(hot["median_ns"] - 25862.736842105263) < 1e-6 and abs(hot["half_width"] - 0.00026048450117218763) < 1e-12,
          "crossbench hot median and interval")
    check(abs(r["cold_apart"] - (29088 / 29000 - 1)) < 1e-12, "cold apart")
    check(abs(r["hot_vs_batch_apart"] - (25862.736842105263 / 26000 - 1)) < 1e-12, "hot vs batch apart")
    check(hot["before"]["sm_mhz"] == 1980 and cold["after"]["power_w"] == 388.614, "NVML before/after")
    m = rows[("cpp", "matmul/bf16/4096", 1)]
    check(m["crossbench_cold"]["after"]["reasons"] == ["SwPowerCap"], "power cap named from NVML's reasons")
    check(rows[("cpp", "matmul/bf16/64", 1)]["nvbench"] == {"skipped": "result differs from the host fp64 reference (synthetic)"},
          "skipped state")
    check("nvbench" not in rows[("cpp", "addmm/bf16/4096", 1)] and rows[("cpp", "addmm/bf16/4096", 1)]["cold_apart"] is None,
          "a fixture nvbench did not run")
    check("crossbench_cold" not in rows[("py", "add/bf16/4096", 1)], "py: the failed cold step leaves no figures")


def test_steps(result):
    s = result["steps"][0]["smi"]
    check(s["readings"] == 4 and s["sm_mhz_median"] == 1800 and s["sm_mhz_min"] == 1560, "smi clocks")
    check(s["power_w_max"] == 699.9 and s["power_cap_share"] == 0.5 and s["reasons"] == ["SwPowerCap"], "smi power")
    check([x["read"] for x in result["steps"]] == [True] * 5 + [False], "steps read")
    walls = {(w["part"], w["harness"]): w["wall_s"] for w in result["wall_s"]}
    check(walls == {("cpp", "crossbench"): 16.8, ("cpp", "nvbench"): 12.5, ("py", "crossbench"): 9.0, ("py", "nvbench"): 29.4},
          "wall in all: %s" % walls)


def test_markdown(md):
    check(md.count("| fixture | round | nvbench cold median (mean; noise) us | nvbench Batch GPU us | crossbench cold median "
                   "(+-95%) us | crossbench hot median (+-95%) us | cold: xb / nv - 1 (stated) | hot: xb / Batch - 1 |") == 2,
          "times table header, once per part")
    check("| add/bf16/4096 | 1 | 29.000 (29.100; 0.40%) | 26.000 | 29.088 (no interval) | 25.863 (+-0.03%) | +0.30% (0.40%) "
          "| -0.53% |" in md, "add 4096's line")
    check("| matmul/bf16/64 | 1 | skipped: result differs from the host fp64 reference (synthetic) | - | - | 2.910 (+-0.06%) "
          "| - | - |" in md, "skipped line")
    check("| matmul/bf16/4096 | 1 | 1755 MHz | 1980 MHz 387 W -> 1830 MHz 677 W SwPowerCap | 1635 MHz 523 W SwPowerCap -> "
          "1560 MHz 692 W SwPowerCap | 2.10 + 0.70, 3.00, 1.38 |" in md, "matmul 4096's clocks line")
    check("| 1 | cpp | nvbench | cold+batch | 0 | 12.5 | 1800 [1560, 1980] | 573 [700] | 50% of 4 | SwPowerCap |" in md,
          "steps line")
    check("| py | nvbench | 29.4 |" in md and "## Python: nvbench's API against crossbench.bench" in md, "wall, Python part")


def test_bad_input(tmp):
    bad = os.path.join(tmp, "bad.tsv")
    with open(bad, "w") as f:
        f.write("round\tpart\n")
    for steps in (bad, os.path.join(tmp, "nowhere.tsv")):
        out = os.path.join(tmp, "out-bad")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = sbs.main([steps, out])
        check(rc == 2 and not os.path.exists(out) and err.getvalue().count("\n") == 1, "bad input %s: exit 2, one line" % steps)
    with open(bad, "w") as f:
        f.write(HEADER + "1\tcpp\tcrossbench\thot\t%s\t1\t0\t-\n" % DATA)
    with contextlib.redirect_stderr(io.StringIO()):
        check(sbs.main([bad, os.path.join(tmp, "out-bad")]) == 2, "a folder without events.json: exit 2")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        with contextlib.redirect_stdout(io.StringIO()):
            rc = sbs.main([steps_file(tmp), out])
        check(rc == 0, "exit 0")
        with open(os.path.join(out, "side_by_side.json")) as f:
            result = json.load(f)
        with open(os.path.join(out, "side_by_side.md")) as f:
            md = f.read()
        test_rows(result)
        test_steps(result)
        test_markdown(md)
        test_bad_input(tmp)
    print("test_vs_nvbench: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
