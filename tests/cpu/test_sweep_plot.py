#!/usr/bin/env python3
"""ctest `plot_sweep` (label cpu): scripts/plot_sweep.py on the committed synthetic sweep
(results/sweeps/synthetic-h200/sweep.json) must write three non-empty, non-blank PNGs, and bad
input must give one line on stderr and exit code 2.

usage: test_sweep_plot.py REPO_ROOT

Without matplotlib the test is skipped: it prints a line starting "SKIPPED:" that says why and
exits 77 (ctest's SKIP_RETURN_CODE). scripts/test.sh installs matplotlib with pip when it can.
"""
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile

PLOTS = ("time_vs_size.png", "roofline.png", "busy_vs_size.png")


def skip_without_matplotlib():
    if importlib.util.find_spec("matplotlib") is not None:
        return
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if pip.returncode == 0:
        how = (f"pip is there ({pip.stdout.split(' from ')[0]}) but matplotlib was not installed: "
               f"run scripts/test.sh, or {sys.executable} -m pip install matplotlib")
    else:
        how = f"pip is not available for {sys.executable}, so scripts/test.sh could not install it"
    print(f"SKIPPED: matplotlib is not installed; {how}")
    sys.exit(77)


def check_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    assert width >= 600 and height >= 400, f"{path}: {width} x {height} is too small"
    assert len(data) > 20000, f"{path}: only {len(data)} bytes"
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image
    pixels = matplotlib.image.imread(path)
    assert float(pixels.std()) > 0.02, f"{path}: the image is (nearly) blank"
    return width, height, len(data)


def run(args):
    return subprocess.run([sys.executable] + args, capture_output=True, text=True)


def main():
    repo = sys.argv[1]
    script = os.path.join(repo, "scripts", "plot_sweep.py")
    sweep = os.path.join(repo, "results", "sweeps", "synthetic-h200", "sweep.json")
    skip_without_matplotlib()
    with tempfile.TemporaryDirectory() as out:
        r = run([script, sweep, "--out", out])
        assert r.returncode == 0, f"plot_sweep.py failed ({r.returncode}): {r.stderr}"
        for name in PLOTS:
            w, h, size = check_png(os.path.join(out, name))
            print(f"ok: {name}: {w} x {h}, {size} bytes")

        # Bad input: one line on stderr, exit 2, nothing written.
        bad_json = os.path.join(out, "not_a_sweep.json")
        with open(bad_json, "w") as f:
            json.dump({"crossbench": {"format": "ceilings"}}, f)
        garbage = os.path.join(out, "garbage.json")
        with open(garbage, "w") as f:
            f.write("{not json")
        for args in ([os.path.join(out, "missing.json")], [bad_json], [garbage]):
            empty = os.path.join(out, "empty")
            r = run([script] + args + ["--out", empty])
            assert r.returncode == 2, f"{args}: exit {r.returncode}: {r.stderr}"
            assert r.stderr.count("\n") == 1 and r.stderr.startswith("plot_sweep: error: "), r.stderr
            assert not os.path.exists(empty), f"{args}: wrote {empty}"
            print(f"ok: bad input {os.path.basename(args[0])}: {r.stderr.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
