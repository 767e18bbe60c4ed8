"""Shared helpers of the Python CPU tests (tests/cpu/test_*.py, run by ctest).

Each test takes REPO_ROOT and BENCH_EXE on its command line, checks the committed H200 run folder
(results/h200/2026-11-29-e2e) and a run folder replayed from the recorded H200 session
(`bench --replay results/sessions/h200-small-2026-11-29/raw_session.json`, no GPU needed), and either passes
(exit 0), fails (an AssertionError naming the file and the event or field, exit 1) or is skipped
(a line starting "SKIPPED:" that says why, exit 77 = ctest's SKIP_RETURN_CODE).
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

SKIP_CODE = 77
E2E_DIR = os.path.join("results", "h200", "2026-11-29-e2e")
SESSION = os.path.join("results", "sessions", "h200-small-2026-11-29", "raw_session.json")


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP_CODE)


def require_module(module, pip_name, why):
    """Skips the test (exit 77) with a message when `module` cannot be imported."""
    if importlib.util.find_spec(module) is not None:
        return
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if pip.returncode == 0:
        how = (f"pip is there ({pip.stdout.split(' from ')[0]}) but {pip_name} was not installed: "
               f"run scripts/test.sh, or {sys.executable} -m pip install {pip_name}")
    else:
        how = f"pip is not available for {sys.executable}, so scripts/test.sh could not install it"
    skip(f"{why} needs the Python package {pip_name}, which is not installed; {how}")


def parse_args(usage):
    if len(sys.argv) != 3:
        print(f"usage: {os.path.basename(sys.argv[0])} {usage}", file=sys.stderr)
        sys.exit(2)
    return os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def replay(repo, bench, parent):
    """Replays the recorded H200 session into parent/replayed; returns that folder. Exit code 1
    (a validation verdict failed) still wrote every file; the validator's own tests judge that."""
    out = os.path.join(parent, "replayed")
    proc = subprocess.run([bench, "--replay", os.path.join(repo, SESSION), "--out", out],
                          capture_output=True, text=True, cwd=repo)
    written = all(os.path.isfile(os.path.join(out, f)) for f in
                  ("raw_session.json", "events.json", "table.json", "trace_only.json", "full.json",
                   "validation.json"))
    assert proc.returncode in (0, 1) and written, (
        f"bench --replay {SESSION} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return out


def run_folders(repo, bench, parent):
    """[(label, folder)]: the committed H200 e2e run folder and a freshly replayed one."""
    return [("committed " + E2E_DIR, os.path.join(repo, E2E_DIR)),
            ("replayed " + SESSION, replay(repo, bench, parent))]


def main(body):
    """Runs body(tmpdir) and turns an AssertionError into 'FAILED: ...' and exit 1."""
    with tempfile.TemporaryDirectory(prefix="xb-pytest-") as tmp:
        try:
            body(tmp)
        except AssertionError as e:
            print(f"FAILED: {e}")
            sys.exit(1)
