"""The crossbench command line: `python -m crossbench validate ARGS...` and the console script
`crossbench-validate ARGS...` take the `validate` executable's arguments and run its own code in
this process (crossbench._core): the same output, the same exit status (0 passed, 1 a check
failed, 2 usage error or unusable input, one line on stderr).

`python -m crossbench compare A B [--out DIR] [--threshold PCT] [--overhead-threshold PCT]` runs
`bench compare`'s own code (docs/compare.md), then draws compare.png, samples-A.png and
samples-B.png into the output folder when matplotlib is installed (one line saying so when not;
the pictures never change the exit status). It needs a crossbench built with the CUDA toolkit:
compare's C++ reads run folders through the harness's records, which are configured only then;
without, it says so in one line (exit 2) and `bench compare` is the way.
"""
import os
import sys
import time

from . import __version__, _core, _plots

USAGE = ("usage: python -m crossbench validate RUN_DIR | --trace FILE [--trace FILE] [--table FILE] [--events FILE] "
         "[--report FILE] [--markdown FILE]  (validate --help for each flag)\n"
         "       python -m crossbench compare A B [--out DIR] [--threshold PCT] [--overhead-threshold PCT]  "
         "(docs/compare.md)\n"
         "       python -m crossbench --version")


def compare_main(argv=None, prog="python -m crossbench compare"):
    """Runs bench compare's command line on `argv` and draws its pictures; returns its exit status."""
    args = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not hasattr(_core, "compare_command"):
        print(prog + ": error: compare is not available: " + (_core.bench_unavailable or "no compare in this build") +
              "; build/bench compare A B does the same", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in args):
        code, out, err = _core.compare_command([prog, "--help"])
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code
    if not any(a == "--out" or a.startswith("--out=") for a in args):
        # bench compare's default folder, named here so that the pictures know where to go.
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        args += ["--out", os.path.join("results", "compare", "%s-%d" % (stamp, os.getpid()))]
    code, out, err = _core.compare_command([prog] + args)
    sys.stdout.write(out)
    sys.stderr.write(err)
    if code == 2:
        return code
    out_dir = args[args.index("--out") + 1] if "--out" in args else next(a for a in args if a.startswith("--out="))[6:]
    if not _plots.plots_available():
        print("pictures: not drawn, matplotlib is not installed (python3 -m pip install matplotlib)")
        return code
    try:
        for path in _plots.draw_comparison(out_dir):
            print("pictures: wrote " + path)
    except (_plots.PlotInputError, OSError, ValueError) as e:
        print("pictures: not drawn: %s" % e)
    return code


def validate_main(argv=None, prog="crossbench-validate"):
    """Runs validate's command line on `argv` (default sys.argv[1:]) and returns its exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    code, out, err = _core.validate_command([prog] + [str(a) for a in args])
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return code


def main(argv=None):
    """python -m crossbench COMMAND ...: the commands `validate` and `compare`, --help, --version."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if args[0] == "--version":
        print("crossbench " + __version__)
        return 0
    if args[0] == "validate":
        return validate_main(args[1:], prog="python -m crossbench validate")
    if args[0] == "compare":
        return compare_main(args[1:])
    print("python -m crossbench: error: unknown command '%s' (the commands are validate and compare; --help)" % args[0],
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
