#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, build, then every test. GPU tests (ctest label
# `gpu`) skip with "no CUDA device" where there is none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# The plot test (ctest plot_sweep) needs matplotlib for python3: install it with pip when missing.
# Where pip cannot (no pip, no network, an externally managed Python), the test is skipped and says why.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  echo "test: installing matplotlib for the plot test (python3 -m pip install --quiet matplotlib)"
  python3 -m pip install --quiet --disable-pip-version-check --retries 2 --timeout 20 matplotlib ||
    echo "test: note: could not install matplotlib; the plot_sweep test will be skipped" >&2
fi
# The ecosystem tests (issue 9) need, the same way: jsonschema (ctest json_schemas); Holistic Trace
# Analysis (ctest hta), pinned, with the modules it imports at run time (its declared dependencies
# add jupyterlab and pytest, which it does not import, and omit psutil, which it does); scipy for
# Google Benchmark's compare.py (ctest gbench_compare), which Debian and Ubuntu ship as
# libbenchmark-tools. Each test skips, saying why, where its part could not be installed.
xb_pip_install() {  # what-for, then pip arguments
  local what=$1; shift
  echo "test: installing $* for the $what test (python3 -m pip install)"
  python3 -m pip install --quiet --disable-pip-version-check --retries 2 --timeout 20 "$@" ||
    echo "test: note: could not install $*; the $what test will be skipped" >&2
}
xb_has() { python3 -c "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)" "$@" 2>/dev/null; }
if command -v python3 >/dev/null 2>&1; then
  xb_has jsonschema || xb_pip_install json_schemas "jsonschema>=4"
  if ! xb_has hta pandas numpy plotly networkx yaml psutil; then
    xb_pip_install hta pandas numpy plotly networkx pyyaml psutil &&
      xb_pip_install hta --no-deps "holistictraceanalysis==0.5.0"
  fi
  xb_has numpy scipy || xb_pip_install gbench_compare scipy
fi
if [ ! -f /usr/share/benchmark/compare.py ] && command -v apt-get >/dev/null 2>&1; then
  echo "test: installing libbenchmark-tools (Google Benchmark's compare.py) for the gbench_compare test"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  { DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libbenchmark-tools >/dev/null 2>&1 ||
    { $sudo_cmd apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libbenchmark-tools >/dev/null 2>&1; }; } ||
    echo "test: note: could not install libbenchmark-tools; the gbench_compare test will be skipped" >&2
fi
ctest --test-dir "${XB_BUILD_DIR:-build}" --output-on-failure -j "${XB_JOBS:-$(nproc)}" "$@"
