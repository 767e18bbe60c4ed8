#!/usr/bin/env python3
"""The pip package from the source tree, as a user without a GPU toolkit gets it: a wheel built by
scikit-build-core with the CUDA parts off (no nvcc on PATH, else XB_CUDA=OFF), installed into a
FRESH venv (no system site-packages, no source tree on sys.path), then checked there.

1. pip wheel bench/python --no-build-isolation --no-deps (the build python's scikit-build-core and
   nanobind; offline) into WORK/dist, its CMake build in WORK/skbuild (kept: a rerun rebuilds only
   what changed), on a PATH without nvcc.
2. `validate` built in that same CUDA-less build folder (its objects are the module's) and run on
   every committed PyTorch export (tests/data/torch-h200-corpus): the same output and exit status
   as the normal build's `validate`.
3. python3 -m venv WORK/venv; pip install --no-index --no-deps the wheel.
4. In the venv, from WORK (not the source tree): tests/cpu/test_python_check.py installed ROOT
   VALIDATE WORK/venv/bin/crossbench-validate (check_files, check_profile, handler, the console
   script and python -m crossbench validate give validate's verdicts and exit codes); and
   crossbench.bench raises the one-line "built without the CUDA toolkit" error.
Prints each step's seconds.

Usage: test_python_wheel.py ROOT VALIDATE_EXE BUILD_PYTHON WORK_DIR
Exit 0 pass, 1 fail, 77 "SKIPPED: why" where the build python lacks pip, scikit-build-core or
nanobind (scripts/test.sh installs them into <build>/.venv), or python3 -m venv cannot make a venv
with pip (Debian: python3-venv).
"""
import glob
import os
import shutil
import subprocess
import sys
import time

ROOT, VALIDATE, BUILD_PY, WORK = (os.path.abspath(a) if i != 2 else a for i, a in enumerate(sys.argv[1:5]))
CORPUS = os.path.join(ROOT, "tests", "data", "torch-h200-corpus")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def step(what, cmd, **kw):
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)
    print("%s: exit %d, %.1f s" % (what, p.returncode, time.time() - t0))
    return p


def no_nvcc_env():
    """The environment without the CUDA toolkit: PATH without the folders that hold nvcc (unless one
    also holds the C++ compiler or cmake), no CUDACXX/CUDA_HOME/CUDA_PATH/CUDAToolkit_ROOT."""
    env = dict(os.environ)
    for k in ("CUDACXX", "CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT", "CUDA_ROOT"):
        env.pop(k, None)
    keep = []
    for d in env.get("PATH", "").split(os.pathsep):
        has = lambda exe: os.path.isfile(os.path.join(d, exe))
        if has("nvcc") and not (has("c++") or has("cmake")):
            continue
        keep.append(d)
    env["PATH"] = os.pathsep.join(keep)
    return env


def main():
    missing = subprocess.run([BUILD_PY, "-c", "import pip, scikit_build_core, nanobind"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True)
    if missing.returncode != 0:
        print("SKIPPED: %s lacks pip, scikit-build-core or nanobind (%s); scripts/test.sh installs them into "
              "<build>/.venv, offline: pip install scikit-build-core nanobind from a local wheel folder" %
              (BUILD_PY, missing.stdout.strip().splitlines()[-1] if missing.stdout.strip() else "import failed"))
        return 77
    t_start = time.time()
    os.makedirs(WORK, exist_ok=True)
    dist, skbuild, venv = (os.path.join(WORK, d) for d in ("dist", "skbuild", "venv"))
    shutil.rmtree(dist, ignore_errors=True)
    shutil.rmtree(venv, ignore_errors=True)
    env = no_nvcc_env()
    still = shutil.which("nvcc", path=env["PATH"])
    # AUTO finds no CUDA compiler on this PATH; where nvcc shares a folder with the compiler, OFF says it.
    defines = ["-C", "cmake.define.XB_CUDA=OFF"] if still else []
    print("building without nvcc: %s" % ("nvcc is still at %s, so XB_CUDA=OFF" % still if still
                                         else "no nvcc on PATH (XB_CUDA=AUTO finds none)"))
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    p = step("pip wheel bench/python (CUDA parts off)",
             [BUILD_PY, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps", "--no-index", "-w", dist,
              "-C", "build-dir=" + skbuild] + defines + [os.path.join(ROOT, "bench", "python")], env=env)
    wheels = glob.glob(os.path.join(dist, "crossbench-*.whl"))
    if p.returncode != 0 or len(wheels) != 1:
        print(p.stdout[-6000:])
        check(False, "pip wheel failed (exit %d, wheels %r)" % (p.returncode, wheels))
        return 1
    check("crossbench: " in p.stdout and ("no CUDA compiler found" in p.stdout or "XB_CUDA=OFF" in p.stdout),
          "the wheel's configure did not say the CUDA parts are off")

    # validate built without CUDA in the same build folder, against the normal build's.
    b = step("cmake --build (the wheel's build folder) --target validate",
             ["cmake", "--build", skbuild, "--target", "validate", "-j", "2"], env=env)
    nocuda_validate = os.path.join(skbuild, "validate")
    check(b.returncode == 0 and os.path.isfile(nocuda_validate), "validate did not build without CUDA: " + b.stdout[-3000:])
    if b.returncode == 0:
        ldd = subprocess.run(["ldd", nocuda_validate], stdout=subprocess.PIPE, universal_newlines=True).stdout
        check("libcuda" not in ldd and "libcupti" not in ldd, "the CUDA-less validate links CUDA: " + ldd)
        n = 0
        for table in sorted(glob.glob(os.path.join(CORPUS, "*.txt"))):
            w = os.path.basename(table)[:-len(".txt")]
            trace = os.path.join(CORPUS, w + ".json")
            trace = trace if os.path.isfile(trace) else trace + ".gz"
            args = ["--trace", trace, "--table", table]
            a = subprocess.run([nocuda_validate] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            e = subprocess.run([VALIDATE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            check(a.returncode == e.returncode and a.returncode in (0, 1) and a.stdout == e.stdout,
                  "%s: CUDA-less validate exit %d, validate exit %d%s" % (w, a.returncode, e.returncode,
                                                                         "" if a.stdout == e.stdout else ", output differs"))
            print("CUDA-less validate %s: exit %d: %s" % (w, a.returncode, a.stdout.splitlines()[0] if a.stdout else a.stderr))
            n += 1
        check(n == 9, "%d committed exports checked, 9 expected" % n)

    # A fresh venv: no system site-packages, pip from ensurepip, the wheel offline.
    v = step("python3 -m venv (fresh)", [sys.executable, "-m", "venv", venv])
    vpy = os.path.join(venv, "bin", "python3")
    if v.returncode != 0 or subprocess.run([vpy, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIPPED: python3 -m venv cannot make a venv with pip here (%s; Debian: apt-get install python3-venv); "
              "the wheel built and the CUDA-less validate was checked%s" % (v.stdout.strip()[-300:],
                                                                           "" if not failures else ", with failures"))
        return 1 if failures else 77
    i = step("pip install the wheel into the venv", [vpy, "-m", "pip", "install", "--no-index", "--no-deps", wheels[0]])
    check(i.returncode == 0, "pip install of the wheel failed: " + i.stdout[-3000:])
    console = os.path.join(venv, "bin", "crossbench-validate")
    check(os.path.isfile(console), "the console script crossbench-validate was not installed")

    # No source tree in sight: run from WORK with a clean environment for Python.
    venv_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    probe = subprocess.run([vpy, "-c", "import sys, crossbench\n"
                                       "assert 'torch' not in sys.modules, 'import crossbench imported torch'\n"
                                       "print(crossbench.__file__)\n"
                                       "print(crossbench._core.bench_unavailable)\n"
                                       "try:\n    crossbench.bench(lambda: None)\n    print('bench ran')\n"
                                       "except RuntimeError as e:\n    print('RuntimeError:', e)\n"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, cwd=WORK, env=venv_env)
    lines = probe.stdout.splitlines()
    print("installed: " + " | ".join(lines))
    check(probe.returncode == 0 and len(lines) == 3, "importing the installed crossbench: " + probe.stdout)
    if len(lines) == 3:
        check(lines[0].startswith(venv + os.sep), "crossbench imported from %s, not the venv" % lines[0])
        check(lines[1].startswith("crossbench.bench is not available: this crossbench was built without the CUDA toolkit"),
              "bench_unavailable %r" % lines[1])
        check(lines[2] == "RuntimeError: " + lines[1], "bench() without CUDA: %r" % lines[2])
    t = step("tests/cpu/test_python_check.py in the venv",
             [vpy, os.path.join(ROOT, "tests", "cpu", "test_python_check.py"), "installed", ROOT, VALIDATE, console],
             cwd=WORK, env=venv_env)
    print(t.stdout.rstrip())
    check(t.returncode == 0, "the check functions of the installed package (exit %d)" % t.returncode)

    print("total %.1f s" % (time.time() - t_start))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("python_wheel: the CUDA-less wheel installed into a fresh venv checks the corpus as validate does: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
