#!/usr/bin/env python3
"""ctest `compare_plot` (label cpu): the pictures of `bench compare` (issue 39 item 3) on recorded
H200 run folders: scripts/plot_compare.py writes compare.png, samples-A.png and samples-B.png beside
a comparison and samples.png into a run folder (non-empty, non-blank PNGs); bad input gives one line
and exit 2. Where the Python module was built (PYTHON_DIR holds crossbench), `python -m crossbench
compare` (built with the CUDA toolkit only) gives bench compare's exit code and draws the same pictures.

usage: test_compare_plot.py REPO_ROOT BENCH_EXE [PYTHON_DIR]

Without matplotlib the test is skipped: it prints a line starting "SKIPPED:" and exits 77.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_sweep_plot import check_png, skip_without_matplotlib  # noqa: E402


def main():
    repo, bench = sys.argv[1], sys.argv[2]
    python_dir = sys.argv[3] if len(sys.argv) > 3 else ""
    skip_without_matplotlib()
    script = os.path.join(repo, "scripts", "plot_compare.py")
    run_a = os.path.join(repo, "results", "h200", "core-2026-12-01", "bench")
    run_b = os.path.join(repo, "results", "h200", "core-2026-12-01", "rerecord-fcb2b60", "bench")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cmp")
        r = subprocess.run([bench, "compare", run_a, run_b, "--out", out], capture_output=True, text=True)
        assert r.returncode in (0, 3), f"bench compare: exit {r.returncode}: {r.stderr}"
        r = subprocess.run([sys.executable, script, out], capture_output=True, text=True)
        assert r.returncode == 0, f"plot_compare.py failed ({r.returncode}): {r.stderr}"
        for name in ("compare.png", "samples-A.png", "samples-B.png"):
            w, h, size = check_png(os.path.join(out, name))
            print(f"ok: {name}: {w} x {h}, {size} bytes")

        run = os.path.join(tmp, "run")
        os.makedirs(run)
        shutil.copy(os.path.join(run_a, "events.json"), run)
        r = subprocess.run([sys.executable, script, "--samples", run], capture_output=True, text=True)
        assert r.returncode == 0, f"plot_compare.py --samples failed ({r.returncode}): {r.stderr}"
        check_png(os.path.join(run, "samples.png"))
        print("ok: --samples: samples.png")

        # Per-sample SM clocks as a blocking-mode run records them (null where not measured).
        clocked = os.path.join(tmp, "clocked")
        os.makedirs(clocked)
        with open(os.path.join(run_a, "events.json")) as f:
            doc = json.load(f)
        for fx in doc["fixtures"]:
            n = len((fx.get("timing") or {}).get("samples_ns") or [])
            if n:
                fx["timing"]["sample_sm_clock_mhz"] = [None if i % 7 == 6 or i == n - 1 else 1980.0 - i % 3
                                                       for i in range(n)]
        with open(os.path.join(clocked, "events.json"), "w") as f:
            json.dump(doc, f)
        r = subprocess.run([sys.executable, script, "--samples", clocked], capture_output=True, text=True)
        assert r.returncode == 0, f"plot_compare.py --samples with clocks failed ({r.returncode}): {r.stderr}"
        check_png(os.path.join(clocked, "samples.png"))
        print("ok: --samples with per-sample SM clocks (some null): samples.png")

        for args in ([os.path.join(tmp, "missing")], ["--samples", os.path.join(tmp, "missing")]):
            r = subprocess.run([sys.executable, script] + args, capture_output=True, text=True)
            assert r.returncode == 2 and r.stderr.count("\n") == 1, f"{args}: exit {r.returncode}: {r.stderr!r}"
            print(f"ok: bad input: {r.stderr.strip()}")

        env = dict(os.environ, PYTHONPATH=python_dir)
        probe = subprocess.run([sys.executable, "-c", "import crossbench._core as c; print(hasattr(c, 'compare_command'))"],
                               capture_output=True, text=True, env=env) if python_dir else None
        if probe is not None and probe.stdout.strip() == "True":
            out2 = os.path.join(tmp, "cmp-python")
            r = subprocess.run([sys.executable, "-m", "crossbench", "compare", run_a, run_a, "--out", out2],
                               capture_output=True, text=True, env=env)
            assert r.returncode == 0, f"python -m crossbench compare: exit {r.returncode}: {r.stdout}{r.stderr}"
            assert "result: same (exit 0)" in r.stdout, r.stdout
            check_png(os.path.join(out2, "compare.png"))
            r = subprocess.run([sys.executable, "-m", "crossbench", "compare", run_a], capture_output=True, text=True,
                               env=env)
            assert r.returncode == 2 and r.stderr.count("\n") == 1, f"one folder: exit {r.returncode}: {r.stderr!r}"
            print("ok: python -m crossbench compare")
        else:
            print("note: the Python module was not built with compare (no CUDA toolkit); python -m crossbench compare "
                  "not tried")
    return 0


if __name__ == "__main__":
    sys.exit(main())
