#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, build, then every test. GPU tests (ctest label
# `gpu`) skip with "no CUDA device" where there is none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# The Python tests' packages go into a virtual environment under the build folder
# (<build>/.venv, made with python3 -m venv), never into the system Python, and ctest runs the
# Python tests with its interpreter (the cache variable XB_PYTHON3 of tests/CMakeLists.txt is set
# to <build>/.venv/bin/python3, on a fresh configure as on an existing build folder). The venv sees
# the system's own packages (--system-site-packages), so distribution packages such as
# python3-matplotlib count and only what is missing is installed. Where python3 -m venv cannot
# work (Debian/Ubuntu without python3-venv, which is installed here when apt-get can), nothing is
# installed: the tests run with the system python3 and skip, saying why, what it lacks. Without a
# network pip fails, is reported as a note, and the tests that need the package skip likewise.
build_dir=${XB_BUILD_DIR:-build}
venv="$build_dir/.venv"
xb_py=""
xb_make_venv() {
  rm -rf "$venv"
  python3 -m venv --system-site-packages "$venv" >/dev/null 2>&1 && "$venv/bin/python3" -m pip --version >/dev/null 2>&1 ||
    { rm -rf "$venv"; return 1; }
}
if command -v python3 >/dev/null 2>&1; then
  if [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -m pip --version >/dev/null 2>&1; then
    xb_py="$(cd "$venv" && pwd)/bin/python3"
  else
    echo "test: making the Python test environment $venv (python3 -m venv)"
    if ! xb_make_venv && command -v apt-get >/dev/null 2>&1 && ! dpkg -s python3-venv >/dev/null 2>&1; then
      echo "test: installing python3-venv (apt-get) for $venv"
      sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
      { DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >/dev/null 2>&1 ||
        { $sudo_cmd apt-get update -qq >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv >/dev/null 2>&1; }; } || true
      xb_make_venv || true
    fi
    [ -x "$venv/bin/python3" ] && xb_py="$(cd "$venv" && pwd)/bin/python3"
  fi
  if [ -z "$xb_py" ]; then
    echo "test: note: python3 -m venv is not available (Debian/Ubuntu: apt-get install python3-venv); nothing is" \
      "installed for the Python tests, which run with the system python3 and skip what it lacks" >&2
  fi
fi
# The packages: matplotlib (ctest plot_sweep); jsonschema (ctest json_schemas); Holistic Trace
# Analysis (ctest hta), pinned, with the modules it imports at run time (its declared dependencies
# add jupyterlab and pytest, which it does not import, and omit psutil, which it does); scipy for
# Google Benchmark's compare.py (ctest gbench_compare), which Debian and Ubuntu ship as
# libbenchmark-tools. Each test skips, saying why, where its part could not be installed.
xb_pip_install() {  # what-for, then pip arguments
  local what=$1; shift
  echo "test: installing $* for the $what test ($venv: pip install)"
  "$xb_py" -m pip install --quiet --disable-pip-version-check --retries 2 --timeout 20 "$@" ||
    echo "test: note: could not install $*; the $what test will be skipped" >&2
}
xb_has() { "$xb_py" -c "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)" "$@" 2>/dev/null; }
if [ -n "$xb_py" ]; then
  xb_has matplotlib || xb_pip_install plot_sweep matplotlib
  xb_has jsonschema || xb_pip_install json_schemas "jsonschema>=4"
  if ! xb_has hta pandas numpy plotly networkx yaml psutil; then
    xb_has pandas numpy plotly networkx yaml psutil || xb_pip_install hta pandas numpy plotly networkx pyyaml psutil
    xb_has pandas numpy plotly networkx yaml psutil && xb_pip_install hta --no-deps "holistictraceanalysis==0.5.0"
  fi
  xb_has numpy scipy || xb_pip_install gbench_compare scipy
  # nanobind builds crossbench's Python module (ctest python_module, python_gpu); scikit-build-core
  # is what `pip install bench/python` builds it with.
  xb_has nanobind scikit_build_core || xb_pip_install python_module "nanobind>=2" "scikit-build-core>=0.10"
  # ctest's Python tests use this interpreter: reconfigure only when the cache names another one.
  if ! grep -qxF "XB_PYTHON3:FILEPATH=$xb_py" "$build_dir/CMakeCache.txt"; then
    cmake -S . -B "$build_dir" -DXB_PYTHON3:FILEPATH="$xb_py" >/dev/null
  fi
  # The module is configured only where nanobind was found: configure again if it was installed
  # since, and build it (setup.sh built the rest before the venv existed).
  if xb_has nanobind && ! ls "$build_dir"/python/crossbench/_core*.so >/dev/null 2>&1; then
    cmake -S . -B "$build_dir" >/dev/null && cmake --build "$build_dir" -j "${XB_JOBS:-$(nproc)}" --target _core ||
      echo "test: note: could not build the Python module; the python_module test will be skipped" >&2
  fi
elif command -v python3 >/dev/null 2>&1 && grep -q "^XB_PYTHON3:FILEPATH=.*/\.venv/bin/python3$" "$build_dir/CMakeCache.txt"; then
  # The cache still names a venv that is gone: back to the system python3.
  cmake -S . -B "$build_dir" -DXB_PYTHON3:FILEPATH="$(command -v python3)" >/dev/null
fi
if [ ! -f /usr/share/benchmark/compare.py ] && command -v apt-get >/dev/null 2>&1; then
  echo "test: installing libbenchmark-tools (Google Benchmark's compare.py) for the gbench_compare test"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  { DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libbenchmark-tools >/dev/null 2>&1 ||
    { $sudo_cmd apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libbenchmark-tools >/dev/null 2>&1; }; } ||
    echo "test: note: could not install libbenchmark-tools; the gbench_compare test will be skipped" >&2
fi
rc=0
ctest --test-dir "${XB_BUILD_DIR:-build}" --output-on-failure -j "${XB_JOBS:-$(nproc)}" "$@" || rc=$?
# ctest lists skipped tests without their reason (--output-on-failure shows no output for them):
# each skipped test with the first line of its output that says why, from ctest's log (every
# skipping test here prints "no CUDA device" or "SKIPPED:", which its SKIP_REGULAR_EXPRESSION
# matches; the log names that match, while a skip by return code alone reads "Test Passed.").
awk '/^[0-9]+\/[0-9]+ Testing: /{name=$3; why=""}
     why=="" && /no CUDA device|SKIPPED:/ && !/\[  SKIPPED \]/{why=$0}
     /^Skip regular expression found/{print "test: skipped " name ": " (why=="" ? "(no reason printed)" : why)}' \
  "${XB_BUILD_DIR:-build}/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true
exit "$rc"
