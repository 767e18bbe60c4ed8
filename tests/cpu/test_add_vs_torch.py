#!/usr/bin/env python3
"""tools/lab/add_vs_torch.py's bookkeeping on the CPU, without torch or a GPU (issue 19).

Checked on synthetic kernel records (names as CUPTI demangles them on the H200): records go to
their blocks in stream order whatever order they arrive in, warm-up blocks are dropped, the
per-call time and idle gap are right; a missing kernel (a launch not captured into its graph)
and a kernel of the wrong side stop the assignment with a message naming the block; the medians
over rounds, the ratios, GB/s, the size-class summary and the markdown (met/MISSED, candidate
columns, the bit-exact line); bad input is one line and exit 2, nothing written, before torch
is imported; main() end to end on a fake torch and shim (tests/cpu/fake_torch_add.py): every
pattern's blocks match its records, a differing output is listed (exit 1), a launch that escapes
its graph capture stops the run with nothing written; --swap-outputs on a fake whose buffer B is
10% slower to write: each placement's ratio, the kernel factor (0.9, the fakes' kernels) and the
buffer factor (1.1) come out, the main table's median cancels the buffer, a lean candidate runs.

Usage: test_add_vs_torch.py ROOT
"""
import contextlib
import io
import json
import os
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # fake_torch_add
import add_vs_torch as avt  # noqa: E402

OURS = "void xb::(anonymous namespace)::add_flat_kernel<__nv_bfloat16, (xb::AddCachePolicy)0>(const T1 *, const T1 *, T1 *, int)"
OURS_V = "void xb::(anonymous namespace)::add_vectorized_kernel<float, (int)2, (xb::AddCachePolicy)1>(const T1 *, const T1 *, T1 *, long)"
THEIRS = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, "
          "std::array<char *, (unsigned long)3>>(int, T2, T3)")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def near(a, b, tol=1e-9):
    return a is not None and abs(a - b) <= tol * max(1.0, abs(b))


def records(start, count, dur, gap, name):
    """`count` kernels of `dur` us, `gap` us apart, from `start`; returns them and the next start."""
    out = [(start + i * (dur + gap), dur, name) for i in range(count)]
    return out, start + count * (dur + gap) + 5.0


def test_assign():
    recs, t = [], 100.0
    blocks = []
    for key, side, count, dur, gap, name in [(None, "ours", 3, 1.0, 2.0, OURS), ("A", "ours", 4, 0.9, 3.0, OURS),
                                             (None, "torch", 3, 1.2, 0.0, THEIRS), ("B", "torch", 4, 1.1, 0.5, THEIRS)]:
        r, t = records(t, count, dur, gap, name)
        recs += r
        blocks.append((key, side, count))
    got = avt.assign_blocks(list(reversed(recs)), blocks)  # arrival order does not matter
    check(sorted(got) == ["A", "B"], f"only the timed blocks are kept: {sorted(got)}")
    check(near(got["A"]["per_call_ns"], 900.0), f"A per call 900 ns: {got['A']['per_call_ns']}")
    check(near(got["A"]["gap_ns"], 3000.0), f"A gap 3000 ns: {got['A']['gap_ns']}")
    check(near(got["B"]["per_call_ns"], 1100.0) and near(got["B"]["gap_ns"], 500.0), f"B: {got['B']}")
    check(got["A"]["kernel"] == "add_flat_kernel", f"our kernel's short name: {got['A']['kernel']}")
    check(near(got["B"]["kernel_median_ns"], 1100.0), f"B median {got['B']['kernel_median_ns']}")

    missing = recs[:-1]  # one graph-replayed launch short: not captured
    try:
        avt.assign_blocks(missing, blocks)
        check(False, "a missing kernel raises")
    except ValueError as e:
        check("13 kernel records for 14 launches" in str(e) and "not captured" in str(e), f"missing kernel message: {e}")
    swapped = [(s, d, THEIRS if i == 5 else n) for i, (s, d, n) in enumerate(recs)]
    try:
        avt.assign_blocks(swapped, blocks)
        check(False, "a kernel of the wrong side raises")
    except ValueError as e:
        check("block A (ours" in str(e) and "1 kernels of another side" in str(e), f"wrong side message: {e}")
    check(avt.kernel_side(OURS_V) == "ours" and avt.kernel_side(THEIRS) == "torch" and avt.kernel_side("void foo()") is None,
          "kernel_side on both families and a stranger")


def test_summary_and_markdown():
    labels = [avt.SHIPPED, "v1/t128/default"]
    per_round = []
    # Three rounds; per side per-call ns. Shipped: 950, 1000, 990 (median 990) vs PyTorch 1000 -> 0.99 met (eager 64);
    # graph 64: shipped 1100 vs 1000 -> 1.1 MISSED; the candidate always 900 -> 0.9.
    for shipped in (950.0, 1000.0, 990.0):
        rd = {}
        for pat, ours in (("eager", shipped), ("graph", 1100.0)):
            rd[(pat, "bf16", 64, avt.SHIPPED)] = {"per_call_ns": ours, "gap_ns": 2000.0, "kernel": "add_flat_kernel"}
            rd[(pat, "bf16", 64, "v1/t128/default")] = {"per_call_ns": 900.0, "gap_ns": 2000.0, "kernel": "add_flat_kernel"}
            rd[(pat, "bf16", 64, avt.TORCH)] = {"per_call_ns": 1000.0, "gap_ns": 5000.0, "kernel": "vectorized_elementwise_kernel"}
        per_round.append(rd)
    rows = avt.summarize(per_round, ["eager", "graph"], ["bf16"], [64], labels)
    check(len(rows) == 2, f"one row per pattern: {len(rows)}")
    eager = [r for r in rows if r["pattern"] == "eager"][0]
    graph = [r for r in rows if r["pattern"] == "graph"][0]
    check(near(eager["crossbench_ns"], 990.0) and near(eager["ratio"], 0.99), f"eager median and ratio: {eager}")
    check(eager["crossbench_rounds_ns"] == [950.0, 1000.0, 990.0], "rounds kept in order")
    check(near(eager["gbps"], 3 * 64 * 64 * 2 / 990.0), f"GB/s: {eager['gbps']}")
    check(near(graph["ratio"], 1.1) and near(graph["candidates"]["v1/t128/default"]["ratio"], 0.9), f"graph: {graph}")
    check(near(eager["torch_gap_ns"], 5000.0), "PyTorch's gap")
    classes = avt.size_class_summary(rows, labels, [64])
    c = classes[0]
    check(c["best"] == "v1/t128/default" and near(c["best_worst"], 0.9), f"fastest configuration at 64: {c}")
    check(near(c["shipped_geomean"], (0.99 * 1.1) ** 0.5) and near(c["shipped_worst"], 1.1), f"shipped geomean/worst: {c}")
    meta = {"torch": "2.11.0", "gpu": "NVIDIA H200", "utc": "2026-12-01 00:00 UTC", "rounds": 3, "calls": 100,
            "candidates": ["v1/t128/default"], "shipped_configs": {"bf16/64": "v1/t256/default"},
            "clocks": [{"sm_mhz": 1980}, {"sm_mhz": 1965}], "checked_outputs": 4}
    md = avt.markdown(meta, rows, classes, [])
    check("| eager | bf16 | 64 | 0.990 | 1.000 | 0.990 met | 25 | 0.900 (0.900) |" in md, "eager row with candidate column:\n" + md)
    check("| graph | bf16 | 64 | 1.100 | 1.000 | 1.100 MISSED |" in md, "graph row MISSED")
    check("v1/t256/default" in md and "start 1980 MHz, end 1965 MHz" in md, "shipped config and clocks in the text")
    check("| 64 | 1.044 / 1.100 | v1/t128/default | 0.900 / 0.900 |" in md, "size-class row")
    check("bit for bit (4 outputs" in md, "bit-exact line")
    check("GPU " not in md and "LD_LIBRARY_PATH" not in md, "no environment line without an environment")
    meta_env = {**meta, "environment": {"gpu_uuid": "GPU-0123", "ld_library_path": "/usr/local/cuda/lib64",
                                        "gpu": {"multi_processor_count": 132, "L2_cache_size": 52428800},
                                        "libraries": ["/usr/lib/libcuda.so.1", "/x/libcudart.so.13"]}}
    check("GPU GPU-0123 (multi_processor_count 132, L2_cache_size 52428800); LD_LIBRARY_PATH '/usr/local/cuda/lib64'; "
          "libraries mapped: /usr/lib/libcuda.so.1, /x/libcudart.so.13." in avt.markdown(meta_env, rows, classes, []),
          "the environment line")

    class FakeProps:
        uuid = "GPU-abcd"
        multi_processor_count = 132

    class FakeCuda:
        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def get_device_properties(i):
            return FakeProps()

    class FakeTorch:
        cuda = FakeCuda()

    maps = os.path.join(tempfile.mkdtemp(), "maps")
    with open(maps, "w") as f:
        f.write("7f00-7f01 r-xp 00000000 08:01 1 /opt/torch/lib/libcudart.so.13\n"
                "7f01-7f02 r--p 00001000 08:01 1 /opt/torch/lib/libcudart.so.13\n"
                "7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04\n"
                "7f03-7f04 r-xp 00000000 08:01 3 /usr/lib/libc.so.6\n"
                "7f04-7f05 rw-p 00000000 00:00 0\n")
    env = avt.process_environment(FakeTorch(), maps)
    check(env["gpu"] == {"multi_processor_count": 132}, f"process_environment: the GPU's figures torch has: {env}")
    check(env["gpu_uuid"] == "GPU-abcd" and env["libraries"] == ["/opt/torch/lib/libcudart.so.13",
                                                                  "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"],
          f"process_environment: the UUID and each CUDA library once, sorted: {env}")
    bad = avt.markdown(meta, rows, classes, [{"config": "v4/t256/streaming", "dtype": "fp16", "n": 256,
                                              "after": "graph replay", "elements": 3}])
    check("differ from torch.add's: 1" in bad and "- v4/t256/streaming fp16 256 after graph replay: 3 elements" in bad,
          "mismatch listed")


def test_bad_input():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        shim = os.path.join(tmp, "libxb_add_shim.so")
        open(shim, "w").close()
        for argv, says in [(["--sizes", "64,x"], "--sizes:"), (["--dtypes", "bf16,int8"], "--dtypes:"),
                           (["--rounds", "0"], "--rounds"), (["--patterns", "eager,burst"], "--patterns:"), (["--calls", "1"], "--calls"),
                           (["--candidates", "crossbench"], "--candidates:"),
                           (["--candidates", "v4/t256/default@g"], "grid cap after '@g'"),
                           (["--candidates", "v4/t256/default@g0"], "grid cap after '@g'"),
                           (["--swap-outputs", "--rounds", "6"], "--swap-outputs needs --rounds a multiple of 4"),
                           (["--shim", os.path.join(tmp, "none.so")], "not found")]:
            args = ["--shim", shim, "--out", out] + argv
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = avt.main(args)
            lines = err.getvalue().strip().splitlines()
            check(rc == 2 and len(lines) == 1 and says in lines[0], f"{argv}: exit 2, one line with '{says}': {rc} {lines}")
            check(not os.path.exists(out), f"{argv}: nothing written")
        check("torch" not in sys.modules, "bad input is refused before torch is imported")


def test_grid_cap():
    check(avt.split_grid_cap("v4/t256/default@g1056") == ("v4/t256/default", 1056), "NAME@gBLOCKS split")
    check(avt.split_grid_cap("v1/t128/default/lean") == ("v1/t128/default/lean", 0), "no suffix: 0, the device's limit")


def run_main(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = avt.main(args)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def test_main_on_fake_gpu():
    """main() end to end on tests/cpu/fake_torch_add.py: the blocks run_round launches are the
    blocks it assigns the records to, in every pattern; a wrong output and an uncaptured launch."""
    import fake_torch_add as ft
    ft.install()
    avt.Shim = ft.FakeShim
    with tempfile.TemporaryDirectory() as tmp:
        shim = os.path.join(tmp, "libxb_add_shim.so")
        open(shim, "w").close()
        base = ["--shim", shim, "--sizes", "4,8", "--dtypes", "bf16,fp32", "--candidates", "v1/t128/default,v2/t64/default",
                "--rounds", "2", "--calls", "5", "--warmup-calls", "2", "--patterns", "eager,graph,isolated"]
        out = os.path.join(tmp, "ok")
        rc, text, err = run_main(base + ["--out", out])
        check(rc == 0, f"fake run exit 0: {rc} {err[-300:]}")
        with open(os.path.join(out, "add_vs_torch.json")) as f:
            got = json.load(f)
        rows = got["rows"]
        check(len(rows) == 3 * 2 * 2, f"rows: 3 patterns x 2 dtypes x 2 sizes: {len(rows)}")
        check(all(near(r["ratio"], 0.9) and near(r["candidates"]["v2/t64/default"]["ratio"], 0.9) for r in rows),
              "every ratio 0.9 (fake kernels 0.9 vs 1.0 us)")
        check(all(len(r["crossbench_rounds_ns"]) == 2 and near(r["crossbench_gap_ns"], 2000.0) for r in rows),
              "two rounds per row, 2 us gaps")
        check(got["checked_outputs"] == 2 * 2 * 3 * 2 and got["mismatches"] == [], f"outputs checked: {got['checked_outputs']}")
        check(got["clocks"][0]["sm_mhz"] == 1980 and len(got["clocks"]) == 3, "clocks at start and after each round")
        check("| isolated | fp32 | 8 | 0.900 | 1.000 | 0.900 met | 1 | 0.900 (0.900) | 0.900 (0.900) |" in text, "isolated row printed:\n" + text[:1500])

        ft.FakeShim.wrong_config = "v2/t64/default"
        bad_out = os.path.join(tmp, "bad")
        rc, text, _ = run_main(base + ["--out", bad_out])
        ft.FakeShim.wrong_config = None
        check(rc == 1, f"a differing output: exit 1 ({rc})")
        check("- v2/t64/default bf16 4 after eager call: 16 elements" in text
              and "- v2/t64/default fp32 8 after graph replay: 64 elements" in text, "differing outputs listed")

        ft.FakeShim.escape_capture = True
        esc_out = os.path.join(tmp, "escaped")
        rc, _, _ = run_main(base + ["--out", esc_out])
        ft.FakeShim.escape_capture = False
        check(isinstance(rc, str) and "not captured" in rc, f"an uncaptured launch stops the run: {rc}")
        check(not os.path.exists(esc_out), "nothing written after a stopped run")

        # Buffer B (the second output of each point) 10% slower to write, for either side.
        ft.State.slow_second_output = 1.1
        swap_out = os.path.join(tmp, "swap")
        rc, text, err = run_main(["--shim", shim, "--sizes", "4", "--dtypes", "bf16", "--candidates", "v1/t128/default/lean",
                                  "--rounds", "4", "--calls", "5", "--warmup-calls", "2", "--patterns", "eager,graph",
                                  "--swap-outputs", "--out", swap_out])
        ft.State.slow_second_output = 1.0
        check(rc == 0, f"swap run exit 0: {rc} {err[-300:]}")
        with open(os.path.join(swap_out, "add_vs_torch.json")) as f:
            got = json.load(f)
        check(got["round_placements"] == ["crossbench writes B", "crossbench writes B", "crossbench writes A",
                                          "crossbench writes A"], f"placements by round: {got['round_placements']}")
        check(got["checked_outputs"] == 2 * 2 * 2 and got["mismatches"] == [],
              f"2 configurations x eager/graph x 2 placements checked: {got['checked_outputs']} {got['mismatches']}")
        eager = [r for r in got["rows"] if r["pattern"] == "eager"][0]
        check(near(eager["ratio"], 0.9) and near(eager["candidates"]["v1/t128/default/lean"]["ratio"], 0.9),
              f"the median over both placements cancels the buffer: {eager['ratio']}")
        check(eager["crossbench_rounds_ns"] == [990.0, 990.0, 900.0, 900.0], f"ours per round: {eager['crossbench_rounds_ns']}")
        prow = got["placement_rows"]
        check(len(prow) == 2 * 2, f"placement rows: 2 patterns x 2 configurations: {len(prow)}")
        check(all(near(p["ratio_ours_writes_B"], 0.99) and near(p["ratio_ours_writes_A"], 0.9 / 1.1) for p in prow),
              f"each placement's ratio: {prow[0]}")
        check(all(near(p["kernel_factor"], 0.9) and near(p["buffer_factor_B_over_A"], 1.1) for p in prow),
              f"kernel 0.9 and buffer 1.1 factors: {prow[0]}")
        check("| graph | bf16 | 4 | v1/t128/default/lean | 0.9900 | 0.8182 | 0.9000 | 1.1000 |" in text,
              "placement table printed:\n" + text[-1500:])
        check("outputs swapped in rounds 2, 3 (mod 4)" in text, "the header says the outputs were swapped")

        # A grid cap reaches the shim's launch as its max_blocks; bench's own launches pass 0.
        ft.State.grid_caps = set()
        rc, text, err = run_main(["--shim", shim, "--sizes", "4", "--dtypes", "bf16", "--candidates", "v4/t256/default@g1056",
                                  "--rounds", "1", "--calls", "5", "--patterns", "eager", "--out", os.path.join(tmp, "cap")])
        check(rc == 0 and ft.State.grid_caps == {0, 1056}, f"grid caps launched: {ft.State.grid_caps} (exit {rc}) {err[-300:]}")
        check("v4/t256/default@g1056" in text, "the capped candidate has its column")

        # A residency cap ("/rN") reaches the launch as its blocks_per_sm; bench's own passes -1
        # (add_launch_config's choice), an uncapped candidate 0.
        ft.State.residency_caps = set()
        rc, text, err = run_main(["--shim", shim, "--sizes", "4", "--dtypes", "bf16", "--candidates",
                                  "v1/t256/default/lean/r6,v1/t256/default/lean", "--rounds", "1", "--calls", "5",
                                  "--patterns", "eager", "--out", os.path.join(tmp, "resident")])
        check(rc == 0 and ft.State.residency_caps == {-1, 0, 6},
              f"residency caps launched: {ft.State.residency_caps} (exit {rc}) {err[-300:]}")
        check("v1/t256/default/lean/r6" in text, "the capped candidate has its column")


test_assign()
test_summary_and_markdown()
test_bad_input()
test_grid_cap()
test_main_on_fake_gpu()
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("test_add_vs_torch: all checks passed")
