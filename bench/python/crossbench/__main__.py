"""The crossbench command line: `python -m crossbench validate ARGS...` and the console script
`crossbench-validate ARGS...` take the `validate` executable's arguments and run its own code in
this process (crossbench._core): the same output, the same exit status (0 passed, 1 a check
failed, 2 usage error or unusable input, one line on stderr).
"""
import sys

from . import __version__, _core

USAGE = ("usage: python -m crossbench validate RUN_DIR | --trace FILE [--trace FILE] [--table FILE] [--events FILE] "
         "[--report FILE] [--markdown FILE]  (validate --help for each flag)\n"
         "       python -m crossbench --version")


def validate_main(argv=None, prog="crossbench-validate"):
    """Runs validate's command line on `argv` (default sys.argv[1:]) and returns its exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    code, out, err = _core.validate_command([prog] + [str(a) for a in args])
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return code


def main(argv=None):
    """python -m crossbench COMMAND ...: the command `validate`, --help, --version."""
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
    print("python -m crossbench: error: unknown command '%s' (the command is validate; --help)" % args[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
