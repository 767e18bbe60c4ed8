#!/usr/bin/env python3
"""Pictures of a `bench compare` and of run folders (docs/compare.md, "Pictures").

usage: plot_compare.py COMPARE_DIR [--runs A B]
       plot_compare.py --samples RUN_DIR [RUN_DIR ...]

  COMPARE_DIR  the folder `bench compare` wrote (compare.json): writes compare.png there (run A's
               and run B's samples side by side per fixture, with the verdict and the shift), and
               samples-A.png, samples-B.png (each run's samples in time order)
  --runs A B   the two run folders, when they are no longer where compare.json says
  --samples    writes samples.png into each RUN_DIR: per fixture the samples in time order, the
               median and its interval, and the SM clock of each sample where it was recorded

Exit codes: 0 written, 2 unusable input (one line on stderr), 3 matplotlib missing (one line).
The drawing code is the package's (bench/python/crossbench/_plots.py), loaded by path, so this
script needs neither the built module nor an installed crossbench.
"""
import argparse
import importlib.util
import os
import sys


def load_plots():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "bench", "python", "crossbench", "_plots.py")
    spec = importlib.util.spec_from_file_location("crossbench_plots", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot_compare.py", description="pictures of bench compare and run folders")
    parser.add_argument("folders", nargs="+", help="COMPARE_DIR, or RUN_DIRs with --samples")
    parser.add_argument("--samples", action="store_true", help="samples.png into each run folder")
    parser.add_argument("--runs", nargs=2, metavar=("A", "B"), help="the compared run folders")
    args = parser.parse_args(argv)
    plots = load_plots()
    if not plots.plots_available():
        print("plot_compare.py: matplotlib is not installed (python3 -m pip install matplotlib): no pictures drawn",
              file=sys.stderr)
        return 3
    try:
        if args.samples:
            for run in args.folders:
                plots.plot_samples(run, os.path.join(run, "samples.png"))
                print("wrote " + os.path.join(run, "samples.png"))
            return 0
        if len(args.folders) != 1:
            print("plot_compare.py: error: give one COMPARE_DIR (or --samples RUN_DIR ...)", file=sys.stderr)
            return 2
        for path in plots.draw_comparison(args.folders[0], tuple(args.runs) if args.runs else None):
            print("wrote " + path)
        return 0
    except plots.PlotInputError as e:
        print(f"plot_compare.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
