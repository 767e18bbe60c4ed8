#!/usr/bin/env python3
"""tools/lab/add_ncu_probe.py and tools/lab/add_ncu_compare.py on the CPU, without torch, ncu or a GPU
(issue 19).

The probe on the fake torch and shim (tests/cpu/fake_torch_add.py): its manifest lists the blocks
it launches inside the cudaProfilerStart/Stop range, in that order, and nothing else runs there;
a differing output exits 1 before the range with nothing written; bad input is one line, exit 2.
The comparison on ncu-format raw pages built from the probe's own launches (two runs with
different columns): the blocks' means leave out each block's first call, the differences are in %
of PyTorch's, sectors per request are derived, stall reasons and the largest differences are
listed; a kernel count or a side that does not fit the manifest and two runs whose kernels differ
exit 2 naming the block. The SASS helpers on cuobjdump text and on an ncu source page: functions
picked by name, opcodes with their modifiers counted per kernel, executed counts summed.

Usage: test_add_ncu.py ROOT
"""
import contextlib
import csv
import io
import json
import os
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # fake_torch_add
import fake_torch_add as ft  # noqa: E402

ft.install()  # before the probe imports vs_torch (which imports torch)
import add_ncu_compare as anc  # noqa: E402
import add_ncu_probe as probe  # noqa: E402
import add_vs_torch as avt  # noqa: E402

avt.Shim = ft.FakeShim
LEAN = "void xb::(anonymous namespace)::add_lean_kernel<__nv_bfloat16, (int)128, (xb::AddCachePolicy)0, (bool)1, (bool)0>(const T1 *, const T1 *, T1 *, unsigned int, unsigned int)"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(fn, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = fn(argv)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def test_probe(tmp):
    shim = os.path.join(tmp, "libxb_add_shim.so")
    open(shim, "w").close()
    manifest = os.path.join(tmp, "probe.json")
    args = ["--shim", shim, "--manifest", manifest, "--sizes", "4,8", "--calls", "3"]
    for bad, says in [(["--calls", "1"], "--calls"), (["--configs", "torch"], "--configs:"), (["--dtype", "int8"], "--dtype:"),
                      (["--sizes", "4,4"], "--sizes:"), (["--manifest", os.path.join(tmp, "no", "p.json")], "does not exist")]:
        rc, _, err = run(probe.main, args + bad)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and says in lines[0], f"probe {bad}: exit 2, one line with '{says}': {rc} {lines}")
    check(not os.path.exists(manifest), "bad input: no manifest")

    ft.FakeShim.wrong_config = "v1/t128/default/lean"
    ranges_before = len(ft.State.ranges)
    rc, _, err = run(probe.main, args)
    ft.FakeShim.wrong_config = None
    check(rc == 1 and "v1/t128/default/lean bf16 4: 16 elements differ" in err, f"a differing output: exit 1: {rc} {err}")
    check(not os.path.exists(manifest) and len(ft.State.ranges) == ranges_before, "no manifest and no profiled range then")

    rc, _, err = run(probe.main, args)
    check(rc == 0 and "18 kernels in the profiled range" in err, f"probe exit 0: {rc} {err}")
    with open(manifest) as f:
        m = json.load(f)
    want = [(n, label) for n in (4, 8) for label in ("v1/t128/default", "v1/t128/default/lean", "torch")]
    check([(b["n"], b["label"]) for b in m["blocks"]] == want, f"manifest blocks in launch order: {m['blocks']}")
    check(all(b["calls"] == 3 and b["dtype"] == "bf16" for b in m["blocks"]) and m["configs"] == ["v1/t128/default", "v1/t128/default/lean"],
          "manifest: calls, dtype, configs")
    rng = ft.State.ranges[-1]
    sides = [anc.side_of(r["name"]) for r in rng]
    check(sides == ([("ours")] * 6 + ["torch"] * 3) * 2, f"the range holds exactly the blocks, in order: {sides}")
    return m


def raw_csv(path, kernels, columns, units):
    """An `ncu --page raw --csv` page: header, units row, one row per kernel ((name, {metric: value}))."""
    fixed = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
             "Device", "CC"]
    with open(path, "w", newline="") as f:
        f.write("==PROF== Disconnected from process 4242\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(fixed + columns)
        w.writerow([""] * len(fixed) + units)
        for i, (name, vals) in enumerate(kernels):
            w.writerow([str(i), "4242", "python3", "h200", name, "1", "7", "(128, 1, 1)", "(64, 1, 1)", "0", "9.0"]
                       + [vals.get(c, "n/a") for c in columns])


def test_compare(tmp, m):
    # Per block of 3 calls: the first call 10x slower (it follows the other side), then the steady
    # state. Ours: 1000 ns, 40 warp instructions; the lean kernel 985 ns, 30; PyTorch: 960 ns, 48.
    steady = {"v1/t128/default": (1000.0, 40.0), "v1/t128/default/lean": (985.0, 30.0), "torch": (960.0, 48.0)}
    names = {"v1/t128/default": ft.OURS, "v1/t128/default/lean": LEAN, "torch": ft.THEIRS}
    run_a, run_b = [], []
    for b in m["blocks"]:
        ns, inst = steady[b["label"]]
        scale = b["n"] / 4
        for i in range(b["calls"]):
            f = 10.0 if i == 0 else 1.0
            run_a.append((names[b["label"]], {"gpu__time_duration.sum": f"{ns * f * scale:,.1f}",
                                              "smsp__inst_executed.sum": str(inst * scale),
                                              "launch__registers_per_thread": "30" if b["side"] == "ours" else "24",
                                              "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "2.5" if b["side"] == "ours" else "2.0",
                                              "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "0"}))
            run_b.append((names[b["label"]], {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": str(64 * scale),
                                              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": str((16 if b["side"] == "ours" else 8) * scale),
                                              "dram__bytes_read.sum": "1024"}))
    a, bpath = os.path.join(tmp, "core.raw.csv"), os.path.join(tmp, "memory_source.raw.csv")
    cols_a = ["gpu__time_duration.sum", "smsp__inst_executed.sum", "launch__registers_per_thread",
              "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
              "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"]
    raw_csv(a, run_a, cols_a, ["ns", "inst", "register/thread", "", ""])
    cols_b = ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "dram__bytes_read.sum"]
    raw_csv(bpath, run_b, cols_b, ["sector", "request", "byte"])
    man = os.path.join(tmp, "probe.json")
    rc, md, err = run(anc.main, ["compare", "--manifest", man, "--raw", a, "--raw", bpath])
    check(rc == 0, f"compare exit 0: {rc} {err}")
    check("| duration, ns (`gpu__time_duration.sum`) | 960 | 1000 | +4.17 | 985 | +2.60 |" in md,
          "n=4 duration: the first call of each block left out, diff in % of PyTorch's:\n" + md)
    check("| duration, ns (`gpu__time_duration.sum`) | 1920 | 2000 | +4.17 | 1970 | +2.60 |" in md, "n=8 duration (thousands separator read)")
    check("| warp instructions executed (`smsp__inst_executed.sum`) | 48 | 40 | -16.67 | 30 | -37.50 |" in md, "instructions")
    check("| L1 sectors per request, global loads | 8 | 4 | -50.00 | 4 | -50.00 |" in md, "sectors per request derived across the two runs")
    check("stall long_scoreboard, cycles per issued instruction" in md and "barrier" not in md.split("Every metric")[0],
          "a stall both show is listed, one neither shows is not")
    check("| `launch__registers_per_thread` | 24 | 30 | +25.00 |" in md, "largest differences list")
    check("dram__bytes_read.sum" in md and "| `dram__bytes_read.sum`" not in md, "equal metrics stay out of the largest differences")
    check("under ncu (application replay," in md, "the header names the default replay mode")
    rc, md_k, err = run(anc.main, ["compare", "--replay", "kernel", "--manifest", man, "--raw", a, "--raw", bpath])
    check(rc == 0 and "under ncu (kernel replay," in md_k, f"--replay kernel is stated in the header: {rc} {err}")

    for label, bad_a, says in [("one kernel short", run_a[:-1], "17 profiled kernels"),
                               ("a side swapped", [(ft.THEIRS, v) if i == 4 else (n, v) for i, (n, v) in enumerate(run_a)],
                                "block v1/t128/default/lean n=4 (ours")]:
        p = os.path.join(tmp, "bad.raw.csv")
        raw_csv(p, bad_a, cols_a, [""] * len(cols_a))
        rc, _, err = run(anc.main, ["compare", "--manifest", man, "--raw", p])
        check(rc == 2 and says in err and len(err.strip().splitlines()) == 1, f"{label}: exit 2 with '{says}': {rc} {err}")
    p = os.path.join(tmp, "renamed.raw.csv")
    raw_csv(p, [(LEAN, v) for _, v in run_b], cols_b, [""] * 3)
    rc, _, err = run(anc.main, ["compare", "--manifest", man, "--raw", a, "--raw", p])
    check(rc == 2 and "kernel 0 is" in err, f"runs whose kernels differ: exit 2: {rc} {err}")
    rc, _, err = run(anc.main, ["compare", "--manifest", man, "--raw", os.path.join(tmp, "none.csv")])
    check(rc == 2 and "none.csv" in err, f"missing raw page: exit 2: {rc} {err}")


CUOBJDUMP = """
Fatbin elf code:
================
arch = sm_90

	code for sm_90
		Function : void xb::(anonymous namespace)::add_flat_kernel<__nv_bfloat16, (xb::AddCachePolicy)0>(const T1 *, const T1 *, T1 *, int)
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                         /* 0x00000a00ff017b82 */
                                                                                  /* 0x000fe40000000800 */
        /*0010*/                   S2R R0, SR_CTAID.X ;                           /* 0x0000000000007919 */
        /*0020*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;      /* 0x0000000402047981 */
        /*0030*/                   LDG.E.128.CONSTANT R8, desc[UR4][R6.64] ;      /* 0x0000000406087981 */
        /*0040*/                   EXIT ;                                         /* 0x000000000000794d */
		..........


		Function : void xb::(anonymous namespace)::add_flat_kernel<float, (xb::AddCachePolicy)0>(const T1 *, const T1 *, T1 *, int)
        /*0000*/                   LDC R1, c[0x0][0x28] ;                         /* 0x00000a00ff017b82 */
        /*0010*/                   EXIT ;                                         /* 0x000000000000794d */
		..........


		Function : void xb::(anonymous namespace)::add_lean_kernel<__nv_bfloat16, (int)128, (xb::AddCachePolicy)0, (bool)1, (bool)0>(const T1 *, const T1 *, T1 *, unsigned int, unsigned int)
        /*0000*/                   S2R R0, SR_CTAID.X ;                           /* 0x0000000000007919 */
        /*0010*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;      /* 0x0000000402047981 */
        /*0020*/                   EXIT ;                                         /* 0x000000000000794d */
		..........
"""

NCU_SOURCE = '''"Kernel Name","vectorized_elementwise_kernel"
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","Thread Instructions Executed"
"0x7f0000000000","LDC R1, c[0x0][0x28]","0","64","2048"
"0x7f0000000010","S2R R0, SR_CTAID.X","1","64","2048"
"0x7f0000000020","LDG.E.128 R4, desc[UR4][R2.64]","9","64","2048"
"0x7f0000000030","LDG.E.128 R8, desc[UR4][R6.64]","3","64","2048"
"0x7f0000000040","@P0 EXIT","0","64","2048"
'''


def test_sass(tmp):
    dump = os.path.join(tmp, "shim_all.sass")
    with open(dump, "w") as f:
        f.write(CUOBJDUMP)
    rc, out, err = run(anc.main, ["sass", "--match", r"add_(flat|lean)_kernel<__nv_bfloat16", dump])
    check(rc == 0 and out.count("Function :") == 2 and "<float" not in out and out.count("..........") == 2,
          f"sass picks the two bf16 functions whole: {rc} {err}\n{out}")
    ours = os.path.join(tmp, "ours_bf16.sass")
    with open(ours, "w") as f:
        f.write(out)
    rc, _, err = run(anc.main, ["sass", "--match", "no_such_kernel", dump])
    check(rc == 2 and "no function matches" in err and "3 functions" in err, f"no match: exit 2: {rc} {err}")

    src = os.path.join(tmp, "sass_torch.csv")
    with open(src, "w") as f:
        f.write(NCU_SOURCE)
    rc, md, err = run(anc.main, ["opcodes", f"ours={ours}", f"PyTorch={src}"])
    check(rc == 0, f"opcodes exit 0: {rc} {err}")
    head = [line for line in md.splitlines() if line.startswith("| opcode")][0]
    check("ours: void xb::(anonymous namespace)::add_flat_kernel<__nv" in head and "| PyTorch |" in head,
          f"one column per kernel: {head}")
    check("| LDG.E.128.CONSTANT | 2 | 1 | 0 |" in md and "| LDG.E.128 | 0 | 0 | 2 |" in md,
          "opcodes with modifiers, predicates dropped:\n" + md)
    check("| EXIT | 1 | 1 | 1 |" in md and "| **static instructions** | 5 | 3 | 5 |" in md, "static counts")
    check("| LDG.E.128 | 128 |" in md and "| **executed** | 320 |" in md, "executed counts from the source page")
    bad = os.path.join(tmp, "empty.csv")
    open(bad, "w").close()
    rc, _, err = run(anc.main, ["opcodes", f"x={bad}"])
    check(rc == 2 and "no SASS found" in err, f"no SASS: exit 2: {rc} {err}")
    rc, _, err = run(anc.main, ["opcodes", "x"])
    check(rc == 2 and "NAME=FILE" in err, f"opcodes argument without '=': exit 2: {rc} {err}")


with tempfile.TemporaryDirectory() as tmp:
    manifest = test_probe(tmp)
    test_compare(tmp, manifest)
    test_sass(tmp)
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("test_add_ncu: all checks passed")
